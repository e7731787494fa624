import AmbiencePlatform
import Foundation
import Glibc

/// What the media library tells the game, drained by `MediaLibrary.drainEvents()` (the engine's `update()` calls it).
public enum MediaLibraryEvent: Sendable, Equatable {
    /// Items or playlists changed: queries made before it may be stale.
    case libraryDidChange
}

/// Why the library could not do what was asked. Every case names the file or folder.
public enum LibraryError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The SQLite index could not be opened, read or written.
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
        case .folderUnreadable(let path, let code): "\(path): cannot read folder (\(Errno(code)))"
        case .cancelled: "scan cancelled"
        case .invalidNumber(let number): "\(number)"
        }
    }
}

/// One file or folder the scan could not use as it was, and why.
public struct ScanIssue: Sendable, Hashable, CustomStringConvertible {
    /// The path, readable (bytes that are not UTF-8 shown as U+FFFD).
    public var path: String
    /// Why, for a person to read.
    public var reason: String
    /// An issue with `path` for `reason`.
    public init(path: String, reason: String) { self.path = path; self.reason = reason }
    public var description: String { "\(path): \(reason)" }
}

/// How far a scan has come: called once per audio file, before it is looked at, and once at the end.
public struct ScanProgress: Sendable, Equatable {
    /// Audio files looked at so far.
    public var filesDone: Int
    /// Audio files the scan found in all.
    public var totalFiles: Int
    /// The file being looked at (empty in the final call).
    public var currentPath: String
}

/// What a scan found and did.
public struct ScanReport: Sendable, Equatable, CustomStringConvertible {
    /// Audio files found (`.ogg`, `.oga`, `.mp3`, `.wav`, `.flac`, `.opus`), including those that failed (broken symlinks too).
    public var files = 0
    /// Files new to the index.
    public var added = 0
    /// Files read again because their size or modification time changed.
    public var updated = 0
    /// Files gone from disk, and so from the index.
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

    /// An empty report: nothing found yet.
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
/// Thread-safe. Writes (scans, the watcher) use one connection and queries another, read-only; a query waits for a
/// scan only while one of its batches commits.
