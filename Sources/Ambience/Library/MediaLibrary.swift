import Foundation
import Glibc
import Synchronization

/// The music library: an SQLite index of the audio files and playlists under some folders, with their tags and artwork,
/// kept up to date by `scan(progress:)` and, between `beginGeneratingLibraryChangeNotifications()` and its `end…`, by
/// an inotify watcher. Read it with `MediaQuery`.
/// All methods may be called from any thread: a scan writes through one connection while queries read through another.
public final class MediaLibrary: @unchecked Sendable {
    /// The folders scanned, absolute and with symlinks resolved.
    public let folders: [String]
    /// The SQLite index file.
    public let databasePath: String

    let roots: [[UInt8]]
    let writer: GuardedDatabase
    let reader: GuardedDatabase
    private let notifications = Lock<NotificationState>(NotificationState())
    /// Problems found while opening (a rebuilt database), reported by the next scan.
    private let pendingWarnings: Lock<[ScanIssue]>
    private let cancelRequested = Atomic<Bool>(false)
    /// Asks a running loudness analysis to stop after the file it is measuring.
    let loudnessStopRequested = Atomic<Bool>(false)
    /// The background analysis (`startLoudnessAnalysis`), while one runs.
    let loudnessWorker = Lock<WorkerThread?>(nil)
    let loudnessRunning = Atomic<Bool>(false)

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
    /// 3: loudness figures (`loudness`, `peak`, `album_loudness`, `album_peak`, `loudness_state`).
    static let schemaVersion: Int64 = 3

    /// Opens (or creates) the index for `folders`.
    ///
    /// - Parameters:
    ///   - folders: the folders to scan; by default the XDG music folder (`MediaLibrary.defaultFolder()`).
    ///   - databasePath: the index; by default `$XDG_CACHE_HOME/ambience/library.sqlite`. Its folder is created.
    ///   - createIfMissing: when false, a missing index is `LibraryError.noIndex` instead of a new empty one.
    ///   - requestedTimeout: `busyTimeout:`, the seconds to wait for another process's lock before treating the file
    ///     as unusable; clamped to 0…2147483 (SQLite counts it in a C `int` of milliseconds). NaN and infinities are
    ///     `.invalidNumber`.
    ///
    /// A database file that is damaged, not a database, or locked past `busyTimeout` is moved aside (to
    /// `<path>.broken`) and rebuilt; the next scan report carries a warning saying so.
    public init(
        folders: [String]? = nil, databasePath: String? = nil, createIfMissing: Bool = true,
        busyTimeout requestedTimeout: Double = 2
    ) throws(LibraryError) {
        let busyTimeout: Double
        do { busyTimeout = try requestedTimeout.clamped(to: SQLiteDatabase.busyTimeouts, "busy timeout") } catch {
            throw .invalidNumber(error)
        }
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
            opened = try SQLiteDatabase.openRebuildingIfUnusable(
                path: dbPath, busyTimeout: busyTimeout, prepare: Self.prepareSchema)
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
        stopLoudnessAnalysis()
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
            let folder = musicFolder(userDirs: text, home: home)
        {
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
            if value.hasPrefix("\""), value.count >= 2, value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            var unescaped = ""
            var escaping = false
            for character in value {
                if escaping {
                    unescaped.append(character); escaping = false
                } else if character == "\\" {
                    escaping = true
                } else {
                    unescaped.append(character)
                }
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
        let cache =
            environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
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
            try db.execute(
                """
                DROP TABLE IF EXISTS items; DROP TABLE IF EXISTS failures;
                DROP TABLE IF EXISTS playlists; DROP TABLE IF EXISTS playlist_entries;
                """)
        }
        try db.execute(
            """
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
                media_type INTEGER NOT NULL,
                -- Loudness analysis: 0 not yet measured, 1 measured (loudness NULL for silence), 2 could not be.
                -- A changed file is written again with 0, so a rescan measures only what changed.
                loudness_state INTEGER NOT NULL DEFAULT 0,
                loudness REAL, peak REAL, album_loudness REAL, album_peak REAL);
            CREATE INDEX IF NOT EXISTS items_loudness_state ON items(loudness_state);
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
                result.append(
                    MediaPlaylist(
                        persistentID: row.id(0), name: row.text(2) ?? "", url: RawPath.display(path), items: []))
            }
            for index in result.indices {
                try db.query(
                    """
                    SELECT \(LibraryRow.itemColumns) FROM playlist_entries e JOIN items ON items.path = e.path
                    WHERE e.playlist_id = ? ORDER BY e.position
                    """, [.id(result[index].persistentID)]
                ) { row in result[index].items.append(LibraryRow.item(row)) }
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
        var report = try scan(
            scopes: roots.map { ScanScope(folder: $0, recursive: true) }, fullScan: true, progress: progress)
        report.warnings.insert(
            contentsOf: pendingWarnings.withLock { warnings in
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

    private func scan(scopes requested: [ScanScope], fullScan: Bool, progress: ((ScanProgress) -> Void)?)
        throws(LibraryError) -> ScanReport
    {
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
                let indexer = LibraryIndexer(db: db, roots: roots) {
                    fullScan && self.cancelRequested.load(ordering: .relaxed)
                }
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

    func post(_ event: MediaLibraryEvent) {
        notifications.withLock { state in
            guard state.depth > 0, !state.events.contains(event) else { return }
            state.events.append(event)
        }
    }
}

/// A connection and the lock that gives one thread at a time its use.
final class GuardedDatabase: @unchecked Sendable {
    private let lock = NSLock()
    private let database: SQLiteDatabase

    init(_ database: SQLiteDatabase) { self.database = database }

    func use<T>(_ body: (SQLiteDatabase) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(database)
    }
}
