import Foundation
import Glibc
import Synchronization

/// What the media library tells the game, drained by `MediaLibrary.drainEvents()` (the engine's `update()` calls it).
public enum MediaLibraryEvent: Sendable, Equatable {
    /// Items or playlists changed: queries made before it may be stale.
    case libraryDidChange
}

/// Why the library could not do what was asked. Every case names the file or folder.
public enum LibraryError: Error, CustomStringConvertible, Equatable, Sendable {
    case database(SQLiteError)
    /// Opening without creating, and there is no index at the path yet.
    case noIndex(String)
    /// A library folder is missing or cannot be listed.
    case folderUnreadable(String, errno: Int32)
    /// `cancelScan()` stopped a scan. What it had indexed so far is kept.
    case cancelled
    /// A number given to the library is NaN or infinite.
    case invalidNumber(InvalidNumber)

    public var description: String {
        switch self {
        case .database(let error): "\(error)"
        case .noIndex(let path): "\(path): no library index here yet (run 'ambience library scan DIR' first)"
        case .folderUnreadable(let path, let code): "\(path): cannot read folder (\(String(cString: strerror(code))))"
        case .cancelled: "scan cancelled"
        case .invalidNumber(let number): "\(number)"
        }
    }
}

/// One file or folder the scan could not use as it was, and why.
public struct ScanIssue: Sendable, Hashable, CustomStringConvertible {
    /// The path, readable (bytes that are not UTF-8 shown as U+FFFD).
    public var path: String
    public var reason: String
    public init(path: String, reason: String) { self.path = path; self.reason = reason }
    public var description: String { "\(path): \(reason)" }
}

/// How far a scan has come: called once per audio file, before it is looked at, and once at the end.
public struct ScanProgress: Sendable, Equatable {
    public var filesDone: Int
    public var totalFiles: Int
    /// The file being looked at (empty in the final call).
    public var currentPath: String
}

/// What a scan found and did.
public struct ScanReport: Sendable, Equatable, CustomStringConvertible {
    /// Audio files found (`.ogg`, `.oga`, `.mp3`, `.wav`), including those that failed (broken symlinks too).
    public var files = 0
    public var added = 0
    public var updated = 0
    public var removed = 0
    /// Files that could not be indexed, each with the reason. A file that failed before and has not changed since
    /// is not read again; it is listed with its earlier reason.
    public var failed: [ScanIssue] = []
    /// Things worked around: undecodable or over-long tags, unusable artwork, non-UTF-8 names, symlink loops,
    /// unreadable folders, skipped playlist entries, a database that had to be rebuilt.
    public var warnings: [ScanIssue] = []
    /// Playlists (`.m3u`, `.m3u8`) in the library after the scan.
    public var playlists = 0
    /// Seconds the scan took.
    public var duration: Double = 0

    public init() {}

    /// Whether the scan changed any item or playlist.
    public var changedLibrary: Bool { added + updated + removed > 0 || playlistsChanged }
    var playlistsChanged = false
    var wasCancelled = false

    public var description: String {
        "\(files) files, \(added) added, \(updated) updated, \(removed) removed, \(failed.count) failed"
    }
}

/// The user's music: audio files under one or more folders, indexed in SQLite with their tags, exact durations and
/// artwork, plus the `.m3u`/`.m3u8` playlists found beside them.
///
/// Scans are incremental: a file whose size and modification time have not changed is not read again. Between
/// `beginGeneratingLibraryChangeNotifications()` and `end…`, an inotify watcher re-indexes files as they change and
/// queues `.libraryDidChange` for `drainEvents()`.
///
/// Thread-safe. Writes (scans, the watcher) use one connection and queries another, so with SQLite's write-ahead
/// log a query never waits for a scan.
public final class MediaLibrary: @unchecked Sendable {
    /// The folders scanned, absolute and with symlinks resolved.
    public let folders: [String]
    public let databasePath: String

    let roots: [[UInt8]]
    private let writer: GuardedDatabase
    private let reader: GuardedDatabase
    private let notifications = Lock<NotificationState>(NotificationState())
    /// Problems found while opening (a rebuilt database), reported by the next scan.
    private let pendingWarnings: Lock<[ScanIssue]>
    private let cancelRequested = Atomic<Bool>(false)

    private struct NotificationState {
        var depth = 0
        var events: [MediaLibraryEvent] = []
        var watcher: LibraryWatcher?
        var watcherError: String?
    }

    /// Tags longer than this many characters are cut (with a warning): no title needs more, and the index stays small.
    static let maximumTagLength = 1024
    /// Playlist files larger than this are refused.
    static let maximumPlaylistSize = 4 << 20
    /// Images larger than this (embedded or beside the file) are ignored.
    static let maximumArtworkSize = 16 << 20
    static let schemaVersion: Int64 = 2

    /// Opens (or creates) the index for `folders`.
    ///
    /// - Parameters:
    ///   - folders: the folders to scan; by default the XDG music folder (`MediaLibrary.defaultFolder()`).
    ///   - databasePath: the index; by default `$XDG_CACHE_HOME/ambience/library.sqlite`. Its folder is created.
    ///   - createIfMissing: when false, a missing index is `LibraryError.noIndex` instead of a new empty one.
    ///   - busyTimeout: seconds to wait for another process's lock before treating the file as unusable; clamped to
    ///     0…2147483 (SQLite counts it in a C `int` of milliseconds). NaN and infinities are `.invalidNumber`.
    ///
    /// A database file that is damaged, not a database, or locked past `busyTimeout` is moved aside (to
    /// `<path>.broken`) and rebuilt; the next scan report carries a warning saying so.
    public init(folders: [String]? = nil, databasePath: String? = nil, createIfMissing: Bool = true,
                busyTimeout requestedTimeout: Double = 2) throws(LibraryError) {
        let busyTimeout: Double
        do { busyTimeout = try requestedTimeout.clamped(to: SQLiteDatabase.busyTimeouts, "busy timeout") } catch { throw .invalidNumber(error) }
        let environment = ProcessInfo.processInfo.environment
        let chosen = folders ?? [Self.defaultFolder(environment: environment)]
        self.folders = chosen.map(Self.canonicalFolder)
        roots = self.folders.map { Array($0.utf8) }
        let dbPath = databasePath ?? Self.defaultDatabasePath(environment: environment)
        self.databasePath = dbPath

        if !createIfMissing && access(dbPath, F_OK) != 0 { throw .noIndex(dbPath) }
        Self.makeParentFolders(of: dbPath)
        let opened: (SQLiteDatabase, rebuilt: String?)
        let readConnection: SQLiteDatabase
        do throws(SQLiteError) {
            opened = try SQLiteDatabase.openRebuildingIfUnusable(path: dbPath, busyTimeout: busyTimeout, prepare: Self.prepareSchema)
            readConnection = try SQLiteDatabase(path: dbPath, flags: [.readWrite], busyTimeout: busyTimeout)
            // Integers in the SQL text, not values: pragmas take no parameters.
            try opened.0.useMemory(mapBytes: 256 << 20, cacheBytes: 16 << 20)
            try readConnection.useMemory(mapBytes: 256 << 20, cacheBytes: 32 << 20)
        } catch {
            throw .database(error)
        }
        writer = GuardedDatabase(opened.0)
        reader = GuardedDatabase(readConnection)
        pendingWarnings = Lock(opened.rebuilt.map { [ScanIssue(path: dbPath, reason: $0)] } ?? [])
    }

    deinit {
        let watcher = notifications.withLock { state in
            defer { state.watcher = nil }
            return state.watcher
        }
        watcher?.stop()
    }

    /// Warnings from opening the index that no scan has reported yet (a rebuilt database).
    public var openingWarnings: [ScanIssue] { pendingWarnings.withLock { $0 } }

    // MARK: - Defaults

    /// `$XDG_MUSIC_DIR` (from the environment, else from `$XDG_CONFIG_HOME/user-dirs.dirs`, else
    /// `~/.config/user-dirs.dirs`), falling back to `~/Music`.
    public static func defaultFolder(environment: [String: String]) -> String {
        let home = homeFolder(environment: environment)
        if let direct = environment["XDG_MUSIC_DIR"], direct.hasPrefix("/") { return direct }
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        if let text = try? String(contentsOfFile: configHome + "/user-dirs.dirs", encoding: .utf8),
           let folder = musicFolder(userDirs: text, home: home) {
            return folder
        }
        return home + "/Music"
    }

    /// The `XDG_MUSIC_DIR` line of a `user-dirs.dirs` file: `"$HOME/Music"` or an absolute path, quoted, with
    /// backslash escapes. A value that is just `$HOME/` means "disabled" and gives nil.
    static func musicFolder(userDirs text: String, home: String) -> String? {
        var found: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            guard !line.hasPrefix("#"), line.hasPrefix("XDG_MUSIC_DIR") else { continue }
            var value = line.dropFirst("XDG_MUSIC_DIR".count).trimmingCharacters(in: .whitespaces)
            guard value.hasPrefix("=") else { continue }
            value = String(value.dropFirst()).trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\""), value.count >= 2, value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            var unescaped = ""
            var escaping = false
            for character in value {
                if escaping { unescaped.append(character); escaping = false } else if character == "\\" { escaping = true } else { unescaped.append(character) }
            }
            var path: String
            if unescaped.hasPrefix("$HOME") {
                path = home + unescaped.dropFirst("$HOME".count)
            } else if unescaped.hasPrefix("${HOME}") {
                path = home + unescaped.dropFirst("${HOME}".count)
            } else if unescaped.hasPrefix("/") {
                path = unescaped
            } else {
                continue
            }
            while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
            found = path == home ? nil : path
        }
        return found
    }

    /// `$XDG_CACHE_HOME/ambience/library.sqlite`, falling back to `~/.cache/ambience/library.sqlite`.
    public static func defaultDatabasePath(environment: [String: String]) -> String {
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? homeFolder(environment: environment) + "/.cache"
        return cache + "/ambience/library.sqlite"
    }

    private static func homeFolder(environment: [String: String]) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }

    /// Absolute, with symlinks resolved when the folder exists (so paths in the index are stable).
    private static func canonicalFolder(_ folder: String) -> String {
        if let resolved = realpath(folder, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        if folder.hasPrefix("/") { return folder }
        return FileManager.default.currentDirectoryPath + "/" + folder
    }

    private static func makeParentFolders(of path: String) {
        var parent = RawPath.parent(Array(path.utf8))
        var missing: [[UInt8]] = []
        while !parent.isEmpty, parent != [UInt8(ascii: "/")], RawPath.fileStatus(parent) == nil {
            missing.append(parent)
            parent = RawPath.parent(parent)
        }
        for folder in missing.reversed() { RawPath.withCString(folder) { _ = mkdir($0, 0o755) } }
    }

    // MARK: - Schema

    private static func prepareSchema(_ db: SQLiteDatabase) throws(SQLiteError) {
        let version = try db.integer("PRAGMA user_version") ?? 0
        if version != schemaVersion {
            // A cache: an index from another version is simply rebuilt.
            try db.execute("""
                DROP TABLE IF EXISTS items; DROP TABLE IF EXISTS failures;
                DROP TABLE IF EXISTS playlists; DROP TABLE IF EXISTS playlist_entries;
                """)
        }
        try db.execute("""
            CREATE TABLE IF NOT EXISTS items(
                id INTEGER PRIMARY KEY,
                path BLOB NOT NULL UNIQUE,
                folder BLOB NOT NULL,
                size INTEGER NOT NULL,
                mtime INTEGER NOT NULL,
                format TEXT NOT NULL,
                title TEXT, artist TEXT, album TEXT, album_artist TEXT, genre TEXT, composer TEXT,
                track INTEGER, disc INTEGER,
                duration REAL NOT NULL,
                embedded_artwork INTEGER NOT NULL,
                cover BLOB,
                title_key TEXT NOT NULL, artist_key TEXT NOT NULL, album_key TEXT NOT NULL,
                album_artist_key TEXT NOT NULL, genre_key TEXT NOT NULL, composer_key TEXT NOT NULL,
                album_id INTEGER NOT NULL,
                compilation_tag INTEGER NOT NULL,
                compilation INTEGER NOT NULL DEFAULT 0,
                media_type INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS items_folder ON items(folder);
            CREATE INDEX IF NOT EXISTS items_title ON items(title_key);
            -- The grouping indexes end with what a group count reads (media type, compilation flag, name), so
            -- counting every album or artist reads the index alone, never the table.
            CREATE INDEX IF NOT EXISTS items_album ON items(album_key, album_id, disc, track, title_key, media_type, compilation, album);
            CREATE INDEX IF NOT EXISTS items_artist ON items(artist_key, album_key, album_id, disc, track, media_type, compilation, artist);
            CREATE INDEX IF NOT EXISTS items_album_artist ON items(album_artist_key);
            CREATE INDEX IF NOT EXISTS items_genre ON items(genre_key, media_type, compilation, genre);
            CREATE INDEX IF NOT EXISTS items_composer ON items(composer_key, media_type, compilation, composer);
            CREATE TABLE IF NOT EXISTS failures(
                path BLOB PRIMARY KEY, folder BLOB NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
                reason TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS failures_folder ON failures(folder);
            CREATE TABLE IF NOT EXISTS playlists(
                id INTEGER PRIMARY KEY, path BLOB NOT NULL UNIQUE, folder BLOB NOT NULL,
                name TEXT NOT NULL, name_key TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS playlists_folder ON playlists(folder);
            CREATE TABLE IF NOT EXISTS playlist_entries(
                playlist_id INTEGER NOT NULL, position INTEGER NOT NULL, path BLOB NOT NULL,
                PRIMARY KEY(playlist_id, position)) WITHOUT ROWID;
            PRAGMA user_version = \(schemaVersion);
            """)
    }

    // MARK: - Reading the index

    /// Runs `body` on the query connection.
    func read<T: Sendable>(_ body: (SQLiteDatabase) throws(SQLiteError) -> T) throws(LibraryError) -> T {
        do throws(SQLiteError) {
            return try reader.use(body)
        } catch {
            throw .database(error)
        }
    }

    /// Every item, sorted by title.
    public var items: [MediaItem] { MediaQuery(library: self).items }

    /// The item with this `persistentID`, if the library has it.
    public func item(persistentID: UInt64) -> MediaItem? {
        try? read { (db) throws(SQLiteError) -> MediaItem? in
            var found: MediaItem?
            try db.query("SELECT \(LibraryRow.itemColumns) FROM items WHERE items.id = ?", [.id(persistentID)]) { row in
                found = LibraryRow.item(row)
            }
            return found
        }
    }

    /// Every playlist, sorted by name, each with the items it names that are in the library, in playlist order.
    public var playlists: [MediaPlaylist] {
        (try? read { (db) throws(SQLiteError) -> [MediaPlaylist] in
            var result: [MediaPlaylist] = []
            try db.query("SELECT id, path, name FROM playlists ORDER BY name_key, id") { row in
                let path = row.blob(1) ?? []
                result.append(MediaPlaylist(persistentID: row.id(0), name: row.text(2) ?? "", url: RawPath.display(path), items: []))
            }
            for index in result.indices {
                try db.query("""
                    SELECT \(LibraryRow.itemColumns) FROM playlist_entries e JOIN items ON items.path = e.path
                    WHERE e.playlist_id = ? ORDER BY e.position
                    """, [.id(result[index].persistentID)]) { row in result[index].items.append(LibraryRow.item(row)) }
            }
            return result
        }) ?? []
    }

    // MARK: - Scanning

    /// Scans every library folder: new and changed files are read, unchanged ones (same size and modification time)
    /// are not, and files that are gone are removed. Playlists are read again each time.
    ///
    /// Bad input never stops a scan: each unreadable or damaged file, symlink loop or odd name is recorded in the
    /// report and the scan goes on. `progress` is called on this thread. Throws only when a folder cannot be listed
    /// at all or the database fails.
    @discardableResult
    public func scan(progress: ((ScanProgress) -> Void)? = nil) throws(LibraryError) -> ScanReport {
        for (folder, root) in zip(folders, roots) {
            guard let status = RawPath.fileStatus(root) else { throw .folderUnreadable(folder, errno: errno) }
            guard status.isDirectory else { throw .folderUnreadable(folder, errno: ENOTDIR) }
        }
        var report = try scan(scopes: roots.map { ScanScope(folder: $0, recursive: true) }, fullScan: true, progress: progress)
        report.warnings.insert(contentsOf: pendingWarnings.withLock { warnings in
            defer { warnings.removeAll() }
            return warnings
        }, at: 0)
        if report.changedLibrary { post(.libraryDidChange) }
        return report
    }

    /// Makes a running `scan()` stop after the file it is reading and throw `.cancelled` (from any thread, for
    /// example from the progress callback). Files indexed so far stay indexed; nothing is removed.
    public func cancelScan() { cancelRequested.store(true, ordering: .relaxed) }

    /// Part of the library to look at again: one folder, with or without its subfolders.
    struct ScanScope: Hashable, Sendable {
        var folder: [UInt8]
        var recursive: Bool
    }

    /// Re-indexes the scopes the watcher saw change; posts `.libraryDidChange` when the index changed.
    func applyWatchedChanges(_ scopes: [ScanScope]) {
        guard let report = try? scan(scopes: scopes, fullScan: false, progress: nil) else { return }
        if report.changedLibrary { post(.libraryDidChange) }
    }

    private func scan(scopes requested: [ScanScope], fullScan: Bool, progress: ((ScanProgress) -> Void)?) throws(LibraryError) -> ScanReport {
        let started = monotonicNanoseconds()
        // A folder inside another scope is walked with it, not again (which would look like a symlink loop).
        let scopes = LibraryIndexer.outermost(requested).sorted { $0.folder.lexicographicallyPrecedes($1.folder) }
        // Walking the folders needs no database: done before taking the write lock.
        var walk = LibraryWalk()
        for scope in scopes { walk.walk(scope.folder, recursive: scope.recursive) }
        walk.finish()

        if fullScan { cancelRequested.store(false, ordering: .relaxed) }
        var report = ScanReport()
        report.files = walk.audioFiles.count + walk.failed.count
        report.warnings = walk.warnings
        report.failed = walk.failed
        do throws(SQLiteError) {
            try writer.use { (db) throws(SQLiteError) -> Void in
                let indexer = LibraryIndexer(db: db, roots: roots) { fullScan && self.cancelRequested.load(ordering: .relaxed) }
                try indexer.index(walk: walk, scopes: scopes, fullScan: fullScan, report: &report, progress: progress)
            }
        } catch {
            throw .database(error)
        }
        if report.wasCancelled { throw .cancelled }
        report.duration = Double(monotonicNanoseconds() - started) / 1e9
        return report
    }

    // MARK: - Change notifications

    /// Starts watching the library folders (inotify) and queuing `.libraryDidChange` for `drainEvents()`.
    /// Calls nest: each `begin` needs its own `end`.
    public func beginGeneratingLibraryChangeNotifications() {
        notifications.withLock { state in
            state.depth += 1
            guard state.depth == 1, state.watcher == nil else { return }
            do throws(LibraryWatcherError) {
                state.watcher = try LibraryWatcher(roots: roots) { [weak self] scopes in
                    self?.applyWatchedChanges(scopes)
                }
                state.watcherError = nil
            } catch {
                // Without inotify, explicit scans still post notifications.
                state.watcherError = error.description
            }
        }
    }

    /// Balances one `begin…`. At zero the watcher stops and undelivered events are dropped.
    public func endGeneratingLibraryChangeNotifications() {
        let watcher: LibraryWatcher? = notifications.withLock { state in
            guard state.depth > 0 else { return nil }
            state.depth -= 1
            guard state.depth == 0 else { return nil }
            state.events.removeAll()
            defer { state.watcher = nil }
            return state.watcher
        }
        // Stopped outside the lock: the watcher thread may be posting an event right now.
        watcher?.stop()
    }

    /// Whether notifications are being generated (between `begin…` and the matching `end…`).
    public var isGeneratingLibraryChangeNotifications: Bool { notifications.withLock { $0.depth > 0 } }

    /// Why the watcher could not start (for example the inotify watch limit), or nil when it runs or is not needed.
    public var watcherError: String? { notifications.withLock { $0.watcherError } }

    /// The events queued since the last call, in order. Nothing is queued while not generating notifications, and
    /// at most one `.libraryDidChange` waits at a time: it means "query again", and two in a row say nothing more.
    public func drainEvents() -> [MediaLibraryEvent] {
        notifications.withLock { state in
            let drained = state.events
            state.events.removeAll()
            return drained
        }
    }

    private func post(_ event: MediaLibraryEvent) {
        notifications.withLock { state in
            guard state.depth > 0, !state.events.contains(event) else { return }
            state.events.append(event)
        }
    }
}

/// A connection and the lock that gives one thread at a time its use.
private final class GuardedDatabase: @unchecked Sendable {
    private let lock = NSLock()
    private let database: SQLiteDatabase

    init(_ database: SQLiteDatabase) { self.database = database }

    func use<T>(_ body: (SQLiteDatabase) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(database)
    }
}

// MARK: - Rows

/// The columns that make a `MediaItem`, and reading them back.
enum LibraryRow {
    /// Always selected first, in this order, so `item(_:)` can read them by position.
    static let itemColumns = """
        items.id, items.path, items.title, items.artist, items.album, items.album_artist, items.genre, items.composer,
        items.track, items.disc, items.duration, items.embedded_artwork, items.cover IS NOT NULL, items.compilation,
        items.media_type, items.album_id
        """
    static let itemColumnCount: Int32 = 16

    static func item(_ row: SQLiteRow) -> MediaItem {
        // The path is decoded once, straight from SQLite's buffer; its bytes are kept only when they are not UTF-8.
        let (url, pathBytes) = row.withBytes(1) { bytes -> (String, [UInt8]?) in
            let decoded = String(decoding: bytes, as: UTF8.self)
            // Invalid bytes come out as U+FFFD (EF BF BD): without any 0xEF the path was valid UTF-8.
            guard decoded.utf8.contains(0xEF) else { return (decoded, nil) }
            let exact = decoded.utf8.count == bytes.count && decoded.utf8.elementsEqual(bytes)
            return (decoded, exact ? nil : Array(bytes))
        }
        var item = MediaItem(persistentID: row.id(0), url: url, title: row.text(2), artist: row.text(3),
                             albumTitle: row.text(4), albumArtist: row.text(5), genre: row.text(6), composer: row.text(7),
                             trackNumber: row.optionalInteger(8).map { Int($0) }, discNumber: row.optionalInteger(9).map { Int($0) },
                             playbackDuration: row.real(10), hasArtwork: row.bool(11) || row.bool(12))
        item.isCompilation = row.bool(13)
        item.mediaType = MediaType(rawValue: Int(row.integer(14)))
        item.albumPersistentID = row.id(15)
        item.pathBytes = pathBytes
        return item
    }
}

// MARK: - Walking the folders

/// The files under some folders, found with opendir/readdir on raw bytes (so no name is lost), sorted by path.
struct LibraryWalk {
    struct File {
        var path: [UInt8]
        var folder: [UInt8]
        var size: Int64
        var mtime: Int64
    }

    private(set) var audioFiles: [File] = []
    private(set) var playlistFiles: [File] = []
    /// The usable cover image of each folder that has one.
    private(set) var covers: [[UInt8]: [UInt8]] = [:]
    private(set) var failed: [ScanIssue] = []
    private(set) var warnings: [ScanIssue] = []
    /// Every folder walked, in order (the watcher watches them).
    private(set) var folders: [[UInt8]] = []
    /// Folders already walked, by device and inode: a symlink back up the tree is seen, not followed forever.
    private var visited: [FileIdentity: [UInt8]] = [:]

    static let audioExtensions: Set<String> = ["ogg", "oga", "mp3", "wav"]
    static let playlistExtensions: Set<String> = ["m3u", "m3u8"]
    static let coverStems: [String] = ["cover", "folder"]
    static let coverExtensions: Set<String> = ["jpg", "jpeg", "png"]

    /// Walks `folder` (a missing folder has no files), and with `recursive` every folder below it.
    mutating func walk(_ folder: [UInt8], recursive: Bool) {
        guard let status = RawPath.fileStatus(folder), status.isDirectory else { return }
        var pending: [[UInt8]] = [folder]
        while let current = pending.popLast() {
            guard let status = RawPath.fileStatus(current) else { continue }
            if let first = visited[status.identity] {
                warnings.append(ScanIssue(path: RawPath.display(current),
                                          reason: "symlink loop or second link: this folder was already scanned as \(RawPath.display(first)); not followed"))
                continue
            }
            visited[status.identity] = current
            folders.append(current)
            let subfolders = list(current)
            if recursive { pending.append(contentsOf: subfolders.reversed()) }
        }
    }

    /// Sorts what was found, so scans and reports are in a stable order.
    mutating func finish() {
        audioFiles.sort { $0.path.lexicographicallyPrecedes($1.path) }
        playlistFiles.sort { $0.path.lexicographicallyPrecedes($1.path) }
    }

    /// Records the files of one folder; returns its subfolders, sorted.
    private mutating func list(_ folder: [UInt8]) -> [[UInt8]] {
        let names: [RawPath.Entry]
        switch RawPath.listFolder(folder) {
        case .success(let found): names = found
        case .failure(let code):
            warnings.append(ScanIssue(path: RawPath.display(folder), reason: "cannot list folder (\(code))"))
            return []
        }
        var subfolders: [[UInt8]] = []
        var coverCandidates: [(rank: Int, path: [UInt8])] = []
        for entry in names {
            // Hidden files and folders (".Trash", editors' temporary files) are not music.
            if entry.name.first == UInt8(ascii: ".") { continue }
            let path = RawPath.join(folder, entry.name)
            let ext = RawPath.lowercasedExtension(entry.name)
            let isAudio = ext.map(Self.audioExtensions.contains) ?? false
            let isPlaylist = ext.map(Self.playlistExtensions.contains) ?? false
            let coverRank = Self.coverRank(entry.name, ext: ext)
            let mayBeFolder = entry.kind == .folder || entry.kind == .symlink || entry.kind == .unknown
            guard isAudio || isPlaylist || coverRank != nil || mayBeFolder else { continue }

            guard let status = RawPath.fileStatus(path) else {
                let code = errno
                if isAudio || isPlaylist {
                    let reason = code == ELOOP ? "symlink loop (too many levels of symbolic links)"
                        : code == ENOENT && entry.kind == .symlink ? "broken symlink (its target does not exist)"
                        : "cannot read (\(String(cString: strerror(code))))"
                    failed.append(ScanIssue(path: RawPath.display(path), reason: reason))
                } else if code == ELOOP {
                    warnings.append(ScanIssue(path: RawPath.display(path), reason: "symlink loop (too many levels of symbolic links); not followed"))
                }
                continue
            }
            if status.isDirectory {
                subfolders.append(path)
                continue
            }
            let file = File(path: path, folder: folder, size: status.size, mtime: status.mtime)
            if isAudio {
                audioFiles.append(file)
            } else if isPlaylist {
                playlistFiles.append(file)
            } else if let coverRank, status.isRegularFile {
                if status.size > Int64(MediaLibrary.maximumArtworkSize) {
                    warnings.append(ScanIssue(path: RawPath.display(path),
                                              reason: "cover image is \(status.size) bytes, over the 16 MB limit; ignored"))
                } else if status.size > 0 {
                    coverCandidates.append((coverRank, path))
                }
            }
        }
        if let best = coverCandidates.min(by: { $0.rank != $1.rank ? $0.rank < $1.rank : $0.path.lexicographicallyPrecedes($1.path) }) {
            covers[folder] = best.path
        }
        return subfolders
    }

    /// `cover.*` before `folder.*`; nil for anything else.
    static func coverRank(_ name: [UInt8], ext: String?) -> Int? {
        guard let ext, coverExtensions.contains(ext) else { return nil }
        let stem = String(decoding: name.dropLast(ext.utf8.count + 1), as: UTF8.self).lowercased()
        return coverStems.firstIndex(of: stem)
    }
}

// MARK: - Writing the index

/// Brings the index in line with a walk: reads new and changed files, removes what is gone, re-reads playlists.
struct LibraryIndexer {
    let db: SQLiteDatabase
    let roots: [[UInt8]]
    /// Asked between files: true stops the scan (nothing is removed then).
    let shouldStop: () -> Bool

    /// Files per transaction: a crash loses at most this much work, and the watcher's small updates interleave.
    static let batchSize = 256

    private struct Known {
        var size: Int64
        var mtime: Int64
        var cover: [UInt8]?
    }

    private struct KnownFailure {
        var size: Int64
        var mtime: Int64
        var reason: String
    }

    func index(walk: LibraryWalk, scopes: [ScanScope], fullScan: Bool, report: inout ScanReport,
                        progress: ((ScanProgress) -> Void)?) throws(SQLiteError) {
        // What the index holds for the scanned scopes.
        var known: [[UInt8]: Known] = [:]
        var knownFailures: [[UInt8]: KnownFailure] = [:]
        try forEachRow(in: "items", columns: "path, size, mtime, cover", scopes: scopes, fullScan: fullScan) { row in
            known[row.blob(0) ?? []] = Known(size: row.integer(1), mtime: row.integer(2), cover: row.blob(3))
        }
        try forEachRow(in: "failures", columns: "path, size, mtime, reason", scopes: scopes, fullScan: fullScan) { row in
            knownFailures[row.blob(0) ?? []] = KnownFailure(size: row.integer(1), mtime: row.integer(2), reason: row.text(3) ?? "")
        }

        let files = walk.audioFiles
        for batch in stride(from: 0, to: max(files.count, 1), by: Self.batchSize) where !report.wasCancelled {
            try db.transaction { () throws(SQLiteError) -> Void in
                for position in batch..<min(batch + Self.batchSize, files.count) {
                    if shouldStop() {
                        report.wasCancelled = true
                        break
                    }
                    let file = files[position]
                    progress?(ScanProgress(filesDone: position, totalFiles: files.count, currentPath: RawPath.display(file.path)))
                    let cover = walk.covers[file.folder]
                    let old = known.removeValue(forKey: file.path)
                    let oldFailure = knownFailures.removeValue(forKey: file.path)
                    if let old, old.size == file.size, old.mtime == file.mtime {
                        // Unchanged: not read again. Only a cover image added or removed beside it is noted.
                        if old.cover != cover {
                            try db.run("UPDATE items SET cover = ? WHERE path = ?", [cover.map(SQLiteValue.blob) ?? .null, .blob(file.path)])
                            report.updated += 1
                        }
                        continue
                    }
                    if old == nil, let oldFailure, oldFailure.size == file.size, oldFailure.mtime == file.mtime {
                        // Failed before and unchanged since: the same reason, without reading it again.
                        report.failed.append(ScanIssue(path: RawPath.display(file.path), reason: oldFailure.reason))
                        continue
                    }
                    try index(file, cover: cover, existed: old != nil, report: &report)
                }
            }
        }
        if report.wasCancelled { return }
        // What the index held in these scopes and the walk did not find is gone.
        try db.transaction { () throws(SQLiteError) -> Void in
            for path in known.keys {
                report.removed += try db.run("DELETE FROM items WHERE path = ?", [.blob(path)])
            }
            for path in knownFailures.keys {
                try db.run("DELETE FROM failures WHERE path = ?", [.blob(path)])
            }
            if report.added + report.updated + report.removed > 0 { try updateCompilations() }
            try indexPlaylists(walk.playlistFiles, scopes: scopes, fullScan: fullScan, report: &report)
        }
        let playlistCount = try db.integer("SELECT COUNT(*) FROM playlists") ?? 0
        report.playlists = Int(playlistCount)
        if fullScan && report.changedLibrary {
            // Move the new pages from the write-ahead log into the file, where queries read them through the memory
            // map; the log would otherwise be searched for every page until SQLite checkpoints on its own.
            try db.checkpoint()
        }
        progress?(ScanProgress(filesDone: files.count, totalFiles: files.count, currentPath: ""))
    }

    /// Reads one new or changed file into the index, or records why it could not be.
    private func index(_ file: LibraryWalk.File, cover: [UInt8]?, existed: Bool, report: inout ScanReport) throws(SQLiteError) {
        let display = RawPath.display(file.path)
        switch LibraryFileReader.read(file.path) {
        case .failure(let reason):
            try db.run("INSERT OR REPLACE INTO failures(path, folder, size, mtime, reason) VALUES (?, ?, ?, ?, ?)",
                       [.blob(file.path), .blob(file.folder), .integer(file.size), .integer(file.mtime), .text(reason)])
            if existed {
                try db.run("DELETE FROM items WHERE path = ?", [.blob(file.path)])
                report.removed += 1
            }
            report.failed.append(ScanIssue(path: display, reason: reason))
        case .success(let found):
            for warning in found.warnings { report.warnings.append(ScanIssue(path: display, reason: warning)) }
            let id = RawPath.stableID(file.path)
            let tags = found.tags
            let keys = (title: LibraryKey.sortKey(tags.title), artist: LibraryKey.sortKey(tags.artist),
                        album: LibraryKey.sortKey(tags.album), albumArtist: LibraryKey.sortKey(tags.albumArtist),
                        genre: LibraryKey.sortKey(tags.genre), composer: LibraryKey.sortKey(tags.composer))
            // One album: the same album title by the same album artist, or without one, in the same folder.
            var albumIdentity = Array(keys.album.utf8) + [0]
            albumIdentity += tags.albumArtist != nil ? Array(keys.albumArtist.utf8) : file.folder
            let variousArtists: Set<String> = ["various artists", "various", "va", "v.a."]
            let compilationTag = tags.albumArtist.map { variousArtists.contains(LibraryKey.fold($0)) } ?? false
            do throws(SQLiteError) {
                try db.run("""
                    INSERT INTO items(id, path, folder, size, mtime, format, title, artist, album, album_artist, genre, composer,
                        track, disc, duration, embedded_artwork, cover, title_key, artist_key, album_key, album_artist_key,
                        genre_key, composer_key, album_id, compilation_tag, media_type)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(path) DO UPDATE SET folder = excluded.folder, size = excluded.size, mtime = excluded.mtime,
                        format = excluded.format, title = excluded.title, artist = excluded.artist, album = excluded.album,
                        album_artist = excluded.album_artist, genre = excluded.genre, composer = excluded.composer,
                        track = excluded.track, disc = excluded.disc, duration = excluded.duration,
                        embedded_artwork = excluded.embedded_artwork, cover = excluded.cover, title_key = excluded.title_key,
                        artist_key = excluded.artist_key, album_key = excluded.album_key,
                        album_artist_key = excluded.album_artist_key, genre_key = excluded.genre_key,
                        composer_key = excluded.composer_key, album_id = excluded.album_id,
                        compilation_tag = excluded.compilation_tag, media_type = excluded.media_type
                    """, [
                        .id(id), .blob(file.path), .blob(file.folder), .integer(file.size), .integer(file.mtime),
                        .text(found.format.rawValue), .optional(tags.title), .optional(tags.artist), .optional(tags.album),
                        .optional(tags.albumArtist), .optional(tags.genre), .optional(tags.composer),
                        .optional(tags.trackNumber), .optional(tags.discNumber), .real(found.duration),
                        .bool(found.hasEmbeddedArtwork), cover.map(SQLiteValue.blob) ?? .null,
                        .text(keys.title), .text(keys.artist), .text(keys.album), .text(keys.albumArtist),
                        .text(keys.genre), .text(keys.composer), .id(RawPath.stableID(albumIdentity)),
                        .bool(compilationTag), .integer(Int64(Self.mediaType(genre: tags.genre).rawValue)),
                    ])
            } catch {
                // The only per-file constraint that can fail: two paths whose 64-bit IDs collide.
                guard case .failed = error else { throw error }
                report.failed.append(ScanIssue(path: display, reason: "cannot be indexed (\(error))"))
                return
            }
            try db.run("DELETE FROM failures WHERE path = ?", [.blob(file.path)])
            if existed { report.updated += 1 } else { report.added += 1 }
        }
    }

    static func mediaType(genre: String?) -> MediaType {
        guard let genre else { return .music }
        let folded = LibraryKey.fold(genre)
        if folded.contains("podcast") { return .podcast }
        if folded.contains("audiobook") || folded.contains("audio book") || folded == "spoken word" { return .audioBook }
        return .music
    }

    /// An album is a compilation when its tracks name more than one artist, or its album artist is "Various Artists".
    /// Only rows whose flag changes are written.
    private func updateCompilations() throws(SQLiteError) {
        try db.execute("""
            WITH mixed AS (
                SELECT album_id FROM items WHERE album IS NOT NULL GROUP BY album_id HAVING COUNT(DISTINCT artist_key) > 1)
            UPDATE items SET compilation = NOT compilation
            WHERE compilation <> (compilation_tag OR album_id IN mixed);
            """)
    }

    /// Calls `body` for the rows of `table` in the scanned scopes (all rows for a full scan).
    private func forEachRow(in table: String, columns: String, scopes: [ScanScope], fullScan: Bool,
                            _ body: (SQLiteRow) throws(SQLiteError) -> Void) throws(SQLiteError) {
        if fullScan {
            try db.query("SELECT \(columns) FROM \(table)", [], body)
            return
        }
        for scope in scopes {
            if scope.recursive {
                let prefix = scope.folder + [UInt8(ascii: "/")]
                try db.query("SELECT \(columns) FROM \(table) WHERE folder = ? OR substr(folder, 1, ?) = ?",
                             [.blob(scope.folder), .integer(Int64(prefix.count)), .blob(prefix)], body)
            } else {
                try db.query("SELECT \(columns) FROM \(table) WHERE folder = ?", [.blob(scope.folder)], body)
            }
        }
    }

    /// Scopes without those another recursive scope already covers.
    static func outermost(_ scopes: [ScanScope]) -> [ScanScope] {
        let unique = Array(Set(scopes))
        return unique.filter { scope in
            !unique.contains { other in
                other != scope && other.recursive
                    && (RawPath.isInside(scope.folder, other.folder) && (scope.folder != other.folder || !scope.recursive))
            }
        }
    }

    // MARK: Playlists

    private func indexPlaylists(_ files: [LibraryWalk.File], scopes: [ScanScope], fullScan: Bool,
                                report: inout ScanReport) throws(SQLiteError) {
        var known: [[UInt8]: UInt64] = [:]
        try forEachRow(in: "playlists", columns: "path, id", scopes: scopes, fullScan: fullScan) { row in
            known[row.blob(0) ?? []] = row.id(1)
        }
        for file in files {
            let id = RawPath.stableID(file.path)
            known[file.path] = nil
            let parsed = PlaylistFile.read(file.path, roots: roots)
            let display = RawPath.display(file.path)
            var issues = parsed.warnings
            var entries: [[UInt8]] = []
            for entry in parsed.entries {
                if try db.integer("SELECT 1 FROM items WHERE path = ?", [.blob(entry.path)]) != nil {
                    entries.append(entry.path)
                    continue
                }
                let target = RawPath.display(entry.path)
                let reason = RawPath.fileStatus(entry.path) == nil
                    ? "line \(entry.line): \(target) not found; skipped"
                    : "line \(entry.line): \(target) is not an indexed audio file; skipped"
                issues.append((entry.line, reason))
            }
            issues.sort { $0.line < $1.line }
            report.warnings += issues.map { ScanIssue(path: display, reason: $0.text) }
            var old: [[UInt8]] = []
            try db.query("SELECT path FROM playlist_entries WHERE playlist_id = ? ORDER BY position", [.id(id)]) { row in
                old.append(row.blob(0) ?? [])
            }
            let oldName = try db.texts("SELECT name FROM playlists WHERE id = ?", [.id(id)]).first
            if old == entries && oldName == parsed.name { continue }
            report.playlistsChanged = true
            try db.run("""
                INSERT INTO playlists(id, path, folder, name, name_key) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(path) DO UPDATE SET name = excluded.name, name_key = excluded.name_key
                """, [.id(id), .blob(file.path), .blob(file.folder), .text(parsed.name), .text(LibraryKey.sortKey(parsed.name))])
            try db.run("DELETE FROM playlist_entries WHERE playlist_id = ?", [.id(id)])
            for (position, path) in entries.enumerated() {
                try db.run("INSERT INTO playlist_entries(playlist_id, position, path) VALUES (?, ?, ?)",
                           [.id(id), .integer(Int64(position)), .blob(path)])
            }
        }
        for (_, id) in known {
            try db.run("DELETE FROM playlist_entries WHERE playlist_id = ?", [.id(id)])
            try db.run("DELETE FROM playlists WHERE id = ?", [.id(id)])
            report.playlistsChanged = true
        }
    }
}

typealias ScanScope = MediaLibrary.ScanScope

// MARK: - Reading one audio file

/// Opens an audio file by content (via `AudioFile`) and returns its cleaned tags, exact duration and artwork flag.
enum LibraryFileReader {
    struct Found {
        var format: AudioFileFormat
        var tags: AudioTags
        var duration: Double
        var hasEmbeddedArtwork: Bool
        var warnings: [String]
    }

    static func read(_ path: [UInt8]) -> Outcome<Found> {
        var warnings: [String] = []
        if !RawPath.isValidUTF8(path) {
            warnings.append("file name is not valid UTF-8; indexed under the exact bytes, shown with U+FFFD")
        }
        let info: AudioInfo, picture: EmbeddedPicture?
        do throws(DecodingError) {
            let decoder = try AudioFile.open(fileSystemPath: path, name: RawPath.display(path))
            info = decoder.info
            switch decoder {
            case let vorbis as VorbisDecoder: picture = decoder.info.tags.hasArtwork ? vorbis.embeddedPicture : nil
            case let mp3 as MP3Decoder: picture = mp3.embeddedPicture
            default: picture = nil
            }
        } catch {
            return .failure(error.reason)
        }
        warnings += info.warnings
        if info.tags.hasArtwork && picture == nil {
            warnings.append("embedded picture is unusable (malformed, or over the 16 MB limit); ignored")
        }
        var tags = AudioTags()
        tags.title = clean(info.tags.title, "title", &warnings)
        tags.artist = clean(info.tags.artist, "artist", &warnings)
        tags.album = clean(info.tags.album, "album", &warnings)
        tags.albumArtist = clean(info.tags.albumArtist, "album artist", &warnings)
        tags.genre = clean(info.tags.genre, "genre", &warnings)
        tags.composer = clean(info.tags.composer, "composer", &warnings)
        tags.trackNumber = info.tags.trackNumber.flatMap { (1...100_000).contains($0) ? $0 : nil }
        tags.discNumber = info.tags.discNumber.flatMap { (1...10_000).contains($0) ? $0 : nil }
        if tags.title == nil {
            // Like any player: an untitled file is shown by its name, without the extension.
            var name = RawPath.name(path)
            if let ext = RawPath.lowercasedExtension(name) { name.removeLast(ext.utf8.count + 1) }
            tags.title = clean(RawPath.display(name), "file name", &warnings)
        }
        tags.hasArtwork = picture != nil
        return .success(Found(format: info.format, tags: tags, duration: info.duration, hasEmbeddedArtwork: picture != nil,
                              warnings: warnings))
    }

    /// A tag as stored: control characters become spaces, ends trimmed, at most `maximumTagLength` characters.
    /// Text that was not valid in its declared encoding has already had its bad bytes replaced by U+FFFD.
    static func clean(_ value: String?, _ field: String, _ warnings: inout [String]) -> String? {
        guard let value else { return nil }
        var scalars = String.UnicodeScalarView()
        var replaced = false
        for scalar in value.unicodeScalars {
            if scalar == "\u{FFFD}" { replaced = true }
            scalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
        }
        if replaced { warnings.append("\(field) tag is not valid text in its encoding; undecodable bytes shown as U+FFFD") }
        var text = String(scalars).trimmingCharacters(in: .whitespaces)
        if text.utf8.count > MediaLibrary.maximumTagLength {
            let length = text.count
            if length > MediaLibrary.maximumTagLength {
                text = String(text.prefix(MediaLibrary.maximumTagLength))
                warnings.append("\(field) tag is \(length) characters; cut to the first \(MediaLibrary.maximumTagLength)")
            }
        }
        return text.isEmpty ? nil : text
    }
}

// MARK: - Playlist files

/// Reading a playlist file; the parsing itself is in Playlist.swift.
extension PlaylistFile {
    static func read(_ path: [UInt8], roots: [[UInt8]]) -> Parsed {
        var stem = RawPath.name(path)
        let ext = RawPath.lowercasedExtension(stem)
        if let ext { stem.removeLast(ext.utf8.count + 1) }
        var parsed = Parsed(name: RawPath.display(stem))
        let bytes: [UInt8]
        switch RawPath.readFile(path, limit: MediaLibrary.maximumPlaylistSize) {
        case .success(let read): bytes = read
        case .failure(let reason):
            parsed.warnings.append((0, "playlist not read: \(reason)"))
            return parsed
        }
        parse(bytes, folder: RawPath.parent(path), isUTF8Playlist: ext == "m3u8", roots: roots, into: &parsed)
        return parsed
    }
}

// MARK: - Raw paths

/// A value, or the reason (one readable phrase) there is none.
enum Outcome<Value> {
    case success(Value)
    case failure(String)
}

/// Device and inode: what makes a file itself, whatever path reached it.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
}

/// The file-system side of `RawPath` (its text operations are in Playlist.swift).
extension RawPath {
    struct Status {
        var mode: UInt32
        var size: Int64
        /// Nanoseconds since the epoch.
        var mtime: Int64
        var identity: FileIdentity
        var isDirectory: Bool { mode & S_IFMT == S_IFDIR }
        var isRegularFile: Bool { mode & S_IFMT == S_IFREG }
    }

    enum EntryKind { case folder, file, symlink, unknown, other }

    struct Entry {
        var name: [UInt8]
        var kind: EntryKind
    }


    static func withCString<T>(_ path: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (path + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }

    /// `stat` (following symlinks), or nil with `errno` set.
    static func fileStatus(_ path: [UInt8], followSymlinks: Bool = true) -> Status? {
        var status = stat()
        let result = withCString(path) { followSymlinks ? stat($0, &status) : lstat($0, &status) }
        guard result == 0 else { return nil }
        return Status(mode: status.st_mode, size: Int64(status.st_size), mtime: nanoseconds(status.st_mtim),
                      identity: FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino)))
    }

    /// A file time in nanoseconds since the epoch, saturating at `Int64`'s ends: a file system may store any 64-bit
    /// second count (a file from a card whose clock said the year 2300), and only changes of it matter here.
    static func nanoseconds(_ time: timespec) -> Int64 {
        let (seconds, overflow) = Int64(time.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflow2) = seconds.addingReportingOverflow(Int64(time.tv_nsec))
        guard overflow || overflow2 else { return total }
        return time.tv_sec < 0 ? .min : .max
    }

    /// The names in a folder (without `.` and `..`), sorted by bytes.
    static func listFolder(_ path: [UInt8]) -> Result<[Entry], Errno> {
        guard let dir = withCString(path, { opendir($0) }) else { return .failure(.current) }
        defer { closedir(dir) }
        var entries: [Entry] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { return .failure(.current) }
                break
            }
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            let kind: EntryKind
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_DIR): kind = .folder
            case Int32(DT_REG): kind = .file
            case Int32(DT_LNK): kind = .symlink
            case Int32(DT_UNKNOWN): kind = .unknown
            default: kind = .other
            }
            entries.append(Entry(name: name, kind: kind))
        }
        entries.sort { $0.name.lexicographicallyPrecedes($1.name) }
        return .success(entries)
    }

    /// A whole regular file of at most `limit` bytes, or a reason.
    static func readFile(_ path: [UInt8], limit: Int) -> Outcome<[UInt8]> {
        do throws(Errno) {
            let file = try FileDescriptor(opening: path, flags: O_RDONLY | O_NONBLOCK)
            let status = try file.status()
            guard status.st_mode & S_IFMT == S_IFREG else { return .failure("not a regular file") }
            guard status.st_size <= limit else { return .failure("\(status.st_size) bytes, over the \(limit >> 20) MB limit") }
            var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
            let done = try bytes.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) -> Int in
                    guard let start = raw.baseAddress else { return 0 }
                    return try file.read(into: start, count: raw.count, at: 0)
                }
            }.get()
            return .success(Array(bytes.prefix(done)))
        } catch {
            return .failure("cannot read (\(error))")
        }
    }


}
