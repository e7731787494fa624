import AmbienceCore
import AmbiencePlatform
import Foundation
import Glibc

// MARK: - Rows

/// The columns that make a `MediaItem`, and reading them back.
enum LibraryRow {
    /// Always selected first, in this order, so `item(_:)` can read them by position.
    static let itemColumns = """
        items.id, items.path, items.title, items.artist, items.album, items.album_artist, items.genre, items.composer,
        items.track, items.disc, items.duration, items.embedded_artwork, items.cover IS NOT NULL, items.compilation,
        items.media_type, items.album_id, items.loudness, items.peak, items.album_loudness, items.album_peak
        """
    static let itemColumnCount: Int32 = 20

    static func item(_ row: SQLiteRow) -> MediaItem {
        // The path is decoded once, straight from SQLite's buffer; its bytes are kept only when they are not UTF-8.
        let (url, pathBytes) = row.withBytes(1) { bytes -> (String, [UInt8]?) in
            let decoded = String(decoding: bytes, as: UTF8.self)
            // Invalid bytes come out as U+FFFD (EF BF BD): without any 0xEF the path was valid UTF-8.
            guard decoded.utf8.contains(0xEF) else { return (decoded, nil) }
            let exact = decoded.utf8.count == bytes.count && decoded.utf8.elementsEqual(bytes)
            return (decoded, exact ? nil : Array(bytes))
        }
        var item = MediaItem(
            persistentID: row.id(0), url: url, title: row.text(2), artist: row.text(3),
            albumTitle: row.text(4), albumArtist: row.text(5), genre: row.text(6), composer: row.text(7),
            trackNumber: row.optionalInteger(8).map { Int($0) }, discNumber: row.optionalInteger(9).map { Int($0) },
            playbackDuration: row.real(10), hasArtwork: row.bool(11) || row.bool(12))
        item.isCompilation = row.bool(13)
        item.mediaType = MediaType(rawValue: Int(row.integer(14)))
        item.albumPersistentID = row.id(15)
        item.pathBytes = pathBytes
        let loudness = LoudnessMeasurement(
            trackLoudness: row.optionalReal(16), trackPeak: row.optionalReal(17),
            albumLoudness: row.optionalReal(18), albumPeak: row.optionalReal(19))
        item.loudness = loudness.isEmpty ? nil : loudness
        return item
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

    func index(
        walk: LibraryWalk, scopes: [ScanScope], report: inout ScanReport,
        progress: ((ScanProgress) -> Void)?
    ) throws(SQLiteError) {
        // What the index holds for the scanned scopes.
        var known: [[UInt8]: Known] = [:]
        var knownFailures: [[UInt8]: KnownFailure] = [:]
        try forEachRow(in: "items", columns: "path, size, mtime, cover", scopes: scopes) { row in
            known[row.blob(0) ?? []] = Known(size: row.integer(1), mtime: row.integer(2), cover: row.blob(3))
        }
        try forEachRow(in: "failures", columns: "path, size, mtime, reason", scopes: scopes) {
            row in
            knownFailures[row.blob(0) ?? []] = KnownFailure(
                size: row.integer(1), mtime: row.integer(2), reason: row.text(3) ?? "")
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
                    progress?(
                        ScanProgress(
                            filesDone: position, totalFiles: files.count, currentPath: RawPath.display(file.path)))
                    let cover = walk.covers[file.folder]
                    let old = known.removeValue(forKey: file.path)
                    let oldFailure = knownFailures.removeValue(forKey: file.path)
                    if let old, old.size == file.size, old.mtime == file.mtime {
                        // Unchanged: not read again. Only a cover image added or removed beside it is noted.
                        if old.cover != cover {
                            try db.run(
                                "UPDATE items SET cover = ? WHERE path = ?",
                                [cover.map(SQLiteValue.blob) ?? .null, .blob(file.path)])
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
        // What the index held in these scopes and the walk saw to be gone is removed. What it could not see (a folder
        // it could not list, a path it could not look at) is kept: "cannot tell" is not "deleted".
        known = known.filter { !walk.couldNotSee($0.key) }
        knownFailures = knownFailures.filter { !walk.couldNotSee($0.key) }
        try db.transaction { () throws(SQLiteError) -> Void in
            var albumsLosingTracks = Set<UInt64>()
            for path in known.keys {
                if let album = try albumID(ofPath: path) { albumsLosingTracks.insert(album) }
                report.removed += try db.run("DELETE FROM items WHERE path = ?", [.blob(path)])
            }
            // The album's loudness was worked out with the removed tracks: work it out again without them.
            for album in albumsLosingTracks { _ = try LibraryAlbumLoudness.update(album, in: db) }
            for path in knownFailures.keys {
                try db.run("DELETE FROM failures WHERE path = ?", [.blob(path)])
            }
            if report.added + report.updated + report.removed > 0 { try updateCompilations() }
            try indexPlaylists(walk, scopes: scopes, report: &report)
        }
        let playlistCount = try db.integer("SELECT COUNT(*) FROM playlists") ?? 0
        report.playlists = Int(playlistCount)
        progress?(ScanProgress(filesDone: files.count, totalFiles: files.count, currentPath: ""))
    }

    /// Reads one new or changed file into the index, or records why it could not be.
    private func index(_ file: LibraryWalk.File, cover: [UInt8]?, existed: Bool, report: inout ScanReport)
        throws(SQLiteError)
    {
        let display = RawPath.display(file.path)
        switch LibraryFileReader.read(file.path) {
        case .failure(let reason):
            try db.run(
                "INSERT OR REPLACE INTO failures(path, folder, size, mtime, reason) VALUES (?, ?, ?, ?, ?)",
                [.blob(file.path), .blob(file.folder), .integer(file.size), .integer(file.mtime), .text(reason)])
            if existed {
                let album = try albumID(ofPath: file.path)
                try db.run("DELETE FROM items WHERE path = ?", [.blob(file.path)])
                if let album { _ = try LibraryAlbumLoudness.update(album, in: db) }
                report.removed += 1
            }
            report.failed.append(ScanIssue(path: display, reason: reason))
        case .success(let found):
            for warning in found.warnings { report.warnings.append(ScanIssue(path: display, reason: warning)) }
            let id = RawPath.stableID(file.path)
            let tags = found.tags
            let keys = (
                title: LibraryKey.sortKey(tags.title), artist: LibraryKey.sortKey(tags.artist),
                album: LibraryKey.sortKey(tags.album), albumArtist: LibraryKey.sortKey(tags.albumArtist),
                genre: LibraryKey.sortKey(tags.genre), composer: LibraryKey.sortKey(tags.composer)
            )
            // One album: the same album title by the same album artist, or without one, in the same folder.
            var albumIdentity = Array(keys.album.utf8) + [0]
            albumIdentity += tags.albumArtist != nil ? Array(keys.albumArtist.utf8) : file.folder
            let variousArtists: Set<String> = ["various artists", "various", "va", "v.a."]
            let compilationTag = tags.albumArtist.map { variousArtists.contains(LibraryKey.fold($0)) } ?? false
            let album = RawPath.stableID(albumIdentity)
            let oldAlbum = try existed ? albumID(ofPath: file.path) : nil
            do throws(SQLiteError) {
                try db.run(
                    """
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
                        compilation_tag = excluded.compilation_tag, media_type = excluded.media_type,
                        loudness_state = 0, loudness = NULL, peak = NULL, album_loudness = NULL, album_peak = NULL
                    """,
                    [
                        .id(id), .blob(file.path), .blob(file.folder), .integer(file.size), .integer(file.mtime),
                        .text(found.format.rawValue), .optional(tags.title), .optional(tags.artist),
                        .optional(tags.album),
                        .optional(tags.albumArtist), .optional(tags.genre), .optional(tags.composer),
                        .optional(tags.trackNumber), .optional(tags.discNumber), .real(found.duration),
                        .bool(found.hasEmbeddedArtwork), cover.map(SQLiteValue.blob) ?? .null,
                        .text(keys.title), .text(keys.artist), .text(keys.album), .text(keys.albumArtist),
                        .text(keys.genre), .text(keys.composer), .id(album),
                        .bool(compilationTag), .integer(Int64(Self.mediaType(genre: tags.genre).rawValue))
                    ])
            } catch {
                // The only per-file constraint that can fail: two paths whose 64-bit IDs collide.
                guard error.isConstraint else { throw error }
                report.failed.append(ScanIssue(path: display, reason: "cannot be indexed (\(error))"))
                return
            }
            try db.run("DELETE FROM failures WHERE path = ?", [.blob(file.path)])
            // A changed file's figures were cleared, and it may have moved to another album: both albums are worked
            // out again from the tracks measured now.
            if let oldAlbum {
                _ = try LibraryAlbumLoudness.update(oldAlbum, in: db)
                if album != oldAlbum { _ = try LibraryAlbumLoudness.update(album, in: db) }
            }
            if existed { report.updated += 1 } else { report.added += 1 }
        }
    }

    /// The album of the item at `path`, or nil when the index has none there.
    private func albumID(ofPath path: [UInt8]) throws(SQLiteError) -> UInt64? {
        var album: UInt64?
        try db.query("SELECT album_id FROM items WHERE path = ?", [.blob(path)]) { album = $0.id(0) }
        return album
    }

    static func mediaType(genre: String?) -> MediaType {
        guard let genre else { return .music }
        let folded = LibraryKey.fold(genre)
        if folded.contains("podcast") { return .podcast }
        if folded.contains("audiobook") || folded.contains("audio book") || folded == "spoken word" {
            return .audioBook
        }
        return .music
    }

    /// An album is a compilation when its tracks name more than one artist, or its album artist is "Various Artists".
    /// Only rows whose flag changes are written.
    private func updateCompilations() throws(SQLiteError) {
        try db.execute(
            """
            WITH mixed AS (
                SELECT album_id FROM items WHERE album IS NOT NULL GROUP BY album_id HAVING COUNT(DISTINCT artist_key) > 1)
            UPDATE items SET compilation = NOT compilation
            WHERE compilation <> (compilation_tag OR album_id IN mixed);
            """)
    }

    /// Calls `body` for the rows of `table` in the scanned scopes. A full scan's scopes are the library's folders:
    /// rows under other folders (another library sharing the index) are not this scan's to remove.
    private func forEachRow(
        in table: String, columns: String, scopes: [ScanScope], _ body: (SQLiteRow) throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        for scope in scopes {
            if scope.recursive {
                let slash = UInt8(ascii: "/")
                let prefix = scope.folder.last == slash ? scope.folder : scope.folder + [slash]
                try db.query(
                    "SELECT \(columns) FROM \(table) WHERE folder = ? OR substr(folder, 1, ?) = ?",
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
                    && (RawPath.isInside(scope.folder, other.folder)
                        && (scope.folder != other.folder || !scope.recursive))
            }
        }
    }

    // MARK: Playlists

    private func indexPlaylists(_ walk: LibraryWalk, scopes: [ScanScope], report: inout ScanReport)
        throws(SQLiteError)
    {
        var known: [[UInt8]: UInt64] = [:]
        try forEachRow(in: "playlists", columns: "path, id", scopes: scopes) { row in
            let path = row.blob(0) ?? []
            if !walk.couldNotSee(path) { known[path] = row.id(1) }
        }
        for file in walk.playlistFiles {
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
                let reason =
                    RawPath.fileStatus(entry.path) == nil
                    ? "line \(entry.line): \(target) not found; skipped"
                    : "line \(entry.line): \(target) is not an indexed audio file; skipped"
                issues.append((entry.line, reason))
            }
            issues.sort { $0.line < $1.line }
            report.warnings += issues.map { ScanIssue(path: display, reason: $0.text) }
            var old: [[UInt8]] = []
            try db.query("SELECT path FROM playlist_entries WHERE playlist_id = ? ORDER BY position", [.id(id)]) {
                row in
                old.append(row.blob(0) ?? [])
            }
            let oldName = try db.texts("SELECT name FROM playlists WHERE id = ?", [.id(id)]).first
            if old == entries && oldName == parsed.name { continue }
            report.playlistsChanged = true
            try db.run(
                """
                INSERT INTO playlists(id, path, folder, name, name_key) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(path) DO UPDATE SET name = excluded.name, name_key = excluded.name_key
                """,
                [
                    .id(id), .blob(file.path), .blob(file.folder), .text(parsed.name),
                    .text(LibraryKey.sortKey(parsed.name))
                ])
            try db.run("DELETE FROM playlist_entries WHERE playlist_id = ?", [.id(id)])
            for (position, path) in entries.enumerated() {
                try db.run(
                    "INSERT INTO playlist_entries(playlist_id, position, path) VALUES (?, ?, ?)",
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
