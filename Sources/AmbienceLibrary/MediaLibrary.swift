import AmbienceCore
import AmbiencePlatform
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
    ///   - requestedTimeout: `busyTimeout:`, the seconds a read or a write waits for another connection's lock
    ///     before it fails with `SQLiteError.locked`; clamped to 0…2147483 (SQLite counts it in a C `int` of
    ///     milliseconds). NaN and infinities are `.invalidNumber`.
    ///
    /// Opening an existing index touches no file (a missing one is created, with its folder). Reads open it read-only
    /// and write nothing; the first write (a scan, the watcher, loudness analysis) opens it for writing. Only a file
    /// that is damaged or not a database is then moved aside, to `<path>.broken` (or `.broken.2`, … : an older one
    /// is kept) and rebuilt; the next scan report carries a warning saying so. A lock is waited out, never taken for
    /// damage.
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

        if !createIfMissing && !FilePaths.exists(dbPath) { throw .noIndex(dbPath) }
        pendingWarnings = Lock([])
        writer = GuardedDatabase()
        reader = GuardedDatabase()
        reader.opener = { () throws(SQLiteError) in try Self.openReader(path: dbPath, busyTimeout: busyTimeout) }
        writer.opener = { [unowned self] () throws(SQLiteError) in (try openWriter(busyTimeout: busyTimeout), true) }
        // A missing index is made now, so that a path where none can be is an error here, not at the first scan.
        guard !FilePaths.exists(dbPath) else { return }
        do throws(SQLiteError) { try writer.use { _ in } } catch { throw .database(error) }
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
        return ProcessEnvironment.homeFolderOfUser ?? "/"
    }

    /// Absolute, with symlinks resolved when the folder exists (so paths in the index are stable).
    private static func canonicalFolder(_ folder: String) -> String {
        if let resolved = FilePaths.resolved(folder) { return resolved }
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
        for folder in missing.reversed() { try? FilePaths.makeFolder(rawPath: folder) }
    }

    // MARK: - Opening the index

    /// The connection for writing: opened (and when damaged, rebuilt) at the first write. The query connection is
    /// closed first: it may hold an index from 0.2 open in WAL mode, which the writer converts (`useRollbackJournal`),
    /// and after a rebuild it must read the new file, not the one moved aside.
    private func openWriter(busyTimeout: Double) throws(SQLiteError) -> SQLiteDatabase {
        reader.close()
        Self.makeParentFolders(of: databasePath)
        let (database, rebuilt) = try SQLiteDatabase.openForWriting(
            path: databasePath, busyTimeout: busyTimeout, cacheBytes: 16 << 20, prepare: Self.prepareSchema)
        if let rebuilt {
            Log.warning("library: \(rebuilt)")
            pendingWarnings.withLock { $0.append(ScanIssue(path: databasePath, reason: rebuilt)) }
        }
        return database
    }

    // MARK: - Reading the index

    /// Runs `body` on the query connection (read-only: nothing a read does changes a file).
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
    /// are not, and files the scan saw to be gone are removed. Playlists are read again each time. Only these folders
    /// are touched: what the index holds under other folders (another library sharing it) stays.
    ///
    /// Bad input never stops a scan: each unreadable or damaged file, symlink loop or odd name is recorded in the
    /// report and the scan goes on. A folder or file it cannot look at (no permission, a path over PATH_MAX) is
    /// reported, and what the index holds there is kept. `progress` is called on this thread. Throws only when a
    /// library folder is missing or the database fails (`SQLiteError.locked` when another connection holds it past
    /// the busy timeout).
    @discardableResult
    public func scan(progress: ((ScanProgress) -> Void)? = nil) throws(LibraryError) -> ScanReport {
        for (folder, root) in zip(folders, roots) {
            let status: FileStatus
            do throws(Errno) { status = try FileStatus(rawPath: root) } catch {
                throw .folderUnreadable(folder, errno: error.code)
            }
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
        var fresh = ScanReport()
        fresh.files = walk.audioFiles.count + walk.failed.count
        fresh.warnings = walk.warnings
        fresh.failed = walk.failed
        var report = fresh
        // Damage found by the scan itself (the file truncated or overwritten since it was opened) closes the
        // connection; the second attempt opens the file again, which checks it and rebuilds it when it is damaged.
        for attempt in 1...2 {
            report = fresh
            do throws(SQLiteError) {
                try writer.use { (db) throws(SQLiteError) -> Void in
                    let indexer = LibraryIndexer(db: db, roots: roots) {
                        fullScan && self.cancelRequested.load(ordering: .relaxed)
                    }
                    try indexer.index(walk: walk, scopes: scopes, report: &report, progress: progress)
                }
                break
            } catch {
                if attempt == 1 && error.isDamage { continue }
                throw .database(error)
            }
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
