import AmbiencePlatform
import Foundation
import Glibc

/// The index file's schema, and the connections that open it.
extension MediaLibrary {
    /// The connection for queries, read-only. Before any scan has written the index there is nothing to read: an
    /// empty index in memory answers instead (not kept, so the file is opened once a scan has made it).
    static func openReader(path: String, busyTimeout: Double) throws(SQLiteError) -> (SQLiteDatabase, Bool) {
        guard FilePaths.exists(path) else { return (try emptyIndex(), false) }
        let database = try SQLiteDatabase.openForReading(path: path, busyTimeout: busyTimeout, cacheBytes: 32 << 20)
        let version = try database.integer("PRAGMA user_version") ?? 0
        if version == 0 { return (try emptyIndex(), false) }  // created, no schema yet
        guard version == schemaVersion else {
            throw .cannotOpen(
                path: path,
                reason: "written by another version of Ambience (schema \(version), this one reads \(schemaVersion)); "
                    + "a scan rebuilds it")
        }
        return (database, true)
    }

    private static func emptyIndex() throws(SQLiteError) -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: ":memory:")
        try prepareSchema(database)
        return database
    }

    /// Creates the tables when the index is new or from another version; writes nothing when it is current.
    static func prepareSchema(_ db: SQLiteDatabase) throws(SQLiteError) {
        let version = try db.integer("PRAGMA user_version") ?? 0
        guard version != schemaVersion else { return }
        // In one transaction taken before reading (BEGIN IMMEDIATE): an autocommit write that first read could be
        // refused at once, without the busy wait, by another writer's pending lock.
        try db.transaction { () throws(SQLiteError) -> Void in try createSchema(db) }
    }

    private static func createSchema(_ db: SQLiteDatabase) throws(SQLiteError) {
        // A cache: an index from another version is simply rebuilt.
        try db.execute(
            """
            DROP TABLE IF EXISTS items; DROP TABLE IF EXISTS failures;
            DROP TABLE IF EXISTS playlists; DROP TABLE IF EXISTS playlist_entries;
            """)
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
}

/// A connection, opened at its first use, and the lock that gives one thread at a time its use.
final class GuardedDatabase: @unchecked Sendable {
    private let lock = NSLock()
    private var database: SQLiteDatabase?
    /// Opens the connection; `keep` false means use it once and open again next time. Set once, before any use.
    var opener: () throws(SQLiteError) -> (SQLiteDatabase, keep: Bool) = { () throws(SQLiteError) in
        throw .cannotOpen(path: "", reason: "no way to open it was given")
    }

    func use<T>(_ body: (SQLiteDatabase) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        lock.lock()
        defer { lock.unlock() }
        let current: SQLiteDatabase
        if let database {
            current = database
        } else {
            let (opened, keep) = try opener()
            if keep { database = opened }
            current = opened
        }
        do {
            return try body(current)
        } catch {
            // Damage found while reading or writing: the next use opens the file again (the writer then rebuilds
            // it; another process may have already), instead of reading the damaged or moved-aside file forever.
            if error.isDamage { database = nil }
            throw error
        }
    }

    /// Closes the connection; the next use opens it again.
    func close() {
        lock.lock()
        defer { lock.unlock() }
        database = nil
    }
}
