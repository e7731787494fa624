import AmbienceCore
import AmbienceDecoding
import AmbiencePlatform
import Synchronization

/// What one loudness analysis did.
public struct LoudnessReport: Sendable, Equatable, CustomStringConvertible {
    /// Items measured by this run.
    public var measured = 0
    /// Items that could not be decoded to their end; they are not tried again until the file changes.
    public var failed: [ScanIssue] = []
    /// Albums whose loudness was worked out again.
    public var albums = 0
    /// Seconds of audio measured.
    public var audioSeconds: Double = 0
    /// Seconds the run took.
    public var duration: Double = 0
    /// The analysis was stopped (`stopLoudnessAnalysis`) before every item was measured.
    public var wasStopped = false

    public var description: String {
        "\(measured) measured, \(failed.count) failed, \(albums) albums, "
            + "\(DurationText.format(audioSeconds)) of audio in \(DurationText.format(duration))"
    }
}

extension MediaLibrary {
    /// Measures the loudness (EBU R128 integrated loudness and true peak, with libebur128) of every item not measured
    /// yet, then the loudness of each album that gained a measurement. Incremental: an item is measured once, and
    /// again only after its file changed (a rescan that reads a changed file clears its figures). Files are decoded
    /// with no database lock held, so queries and scans go on meanwhile; a file that changed while it was measured
    /// keeps no figure. The player uses these figures for items whose files carry no ReplayGain or R128 tags.
    @discardableResult
    public func analyzeLoudness(progress: ((ScanProgress) -> Void)? = nil) throws(LibraryError) -> LoudnessReport {
        try measurePending(progress: progress, stoppable: false)
    }

    /// `stoppable`: the background run, which `stopLoudnessAnalysis` ends; a caller's own `analyzeLoudness` runs on.
    private func measurePending(
        progress: ((ScanProgress) -> Void)?, stoppable: Bool
    ) throws(LibraryError) -> LoudnessReport {
        let started = monotonicNanoseconds()
        struct Pending { var id: UInt64; var path: [UInt8]; var size: Int64; var mtime: Int64; var albumID: UInt64 }
        let pending: [Pending] = try read { (db) throws(SQLiteError) -> [Pending] in
            var rows: [Pending] = []
            try db.query("SELECT id, path, size, mtime, album_id FROM items WHERE loudness_state = 0 ORDER BY path") {
                row in
                rows.append(
                    Pending(
                        id: row.id(0), path: row.blob(1) ?? [], size: row.integer(2), mtime: row.integer(3),
                        albumID: row.id(4)))
            }
            return rows
        }
        var report = LoudnessReport()
        var albums = Set<UInt64>()
        for (done, item) in pending.enumerated() {
            if stoppable && loudnessStopRequested.load(ordering: .relaxed) {
                report.wasStopped = true
                break
            }
            let display = RawPath.display(item.path)
            progress?(ScanProgress(filesDone: done, totalFiles: pending.count, currentPath: display))
            let state: Int64
            var figures = LoudnessMeasurement()
            do throws(DecodingError) {
                let decoder = try AudioFile.open(fileSystemPath: item.path, name: display)
                report.audioSeconds += decoder.info.duration
                figures = try LoudnessAnalysis.measure(decoder)
                state = 1
            } catch {
                report.failed.append(ScanIssue(path: display, reason: "loudness not measured: \(error.reason)"))
                state = 2
            }
            let written = try write { (db) throws(SQLiteError) -> Int in
                try db.run(
                    """
                    UPDATE items SET loudness_state = ?, loudness = ?, peak = ?
                    WHERE id = ? AND size = ? AND mtime = ? AND loudness_state = 0
                    """,
                    [
                        .integer(state), .optional(figures.trackLoudness), .optional(figures.trackPeak),
                        .id(item.id), .integer(item.size), .integer(item.mtime)
                    ])
            }
            if written > 0 && state == 1 {
                report.measured += 1
                albums.insert(item.albumID)
            }
        }
        report.albums = try updateAlbumLoudness(albums)
        progress?(ScanProgress(filesDone: pending.count, totalFiles: pending.count, currentPath: ""))
        report.duration = Double(monotonicNanoseconds() - started) / 1e9
        if report.measured > 0 { post(.libraryDidChange) }
        return report
    }

    /// Runs `analyzeLoudness` on a background thread (SCHED_BATCH: it never preempts the game), once; the
    /// game hears `.libraryDidChange` (with library notifications on) when figures were added. A second call while
    /// one runs does nothing. Returns at once.
    public func startLoudnessAnalysis() {
        guard !loudnessRunning.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // One lock section from the old thread to the new, so that a stop in between is neither lost nor cleared:
        // `stopLoudnessAnalysis` raises the flag under the same lock. A previous run has ended (the running flag
        // was down), so joining its thread returns at once.
        loudnessWorker.withLock { worker in
            worker?.stop()
            loudnessStopRequested.store(false, ordering: .relaxed)
            worker = WorkerThread(name: "ambience-loudness", scheduling: .batch) { [weak self] _ in
                _ = try? self?.measurePending(progress: nil, stoppable: true)
                self?.loudnessRunning.store(false, ordering: .releasing)
            }
        }
    }

    /// Whether a background analysis is running.
    public var isAnalyzingLoudness: Bool { loudnessRunning.load(ordering: .acquiring) }

    /// Stops a background analysis after the file it is measuring, and waits for its thread.
    public func stopLoudnessAnalysis() {
        let worker = loudnessWorker.withLock { worker in
            loudnessStopRequested.store(true, ordering: .relaxed)
            defer { worker = nil }
            return worker
        }
        worker?.stop()
    }

    /// Works out each album's loudness again (`LibraryAlbumLoudness.update`). Returns how many albums have figures.
    private func updateAlbumLoudness(_ albums: Set<UInt64>) throws(LibraryError) -> Int {
        var count = 0
        for album in albums {
            count += try write { (db) throws(SQLiteError) -> Int in
                try LibraryAlbumLoudness.update(album, in: db) ? 1 : 0
            }
        }
        return count
    }

    private func write<T>(_ body: (SQLiteDatabase) throws(SQLiteError) -> T) throws(LibraryError) -> T {
        do throws(SQLiteError) {
            return try writer.use(body)
        } catch {
            throw .database(error)
        }
    }
}

/// An album's loudness in the index, from its measured tracks: the analysis updates it when a track is measured, and
/// a scan when a track leaves the album (removed, unreadable, or changed and so no longer measured).
enum LibraryAlbumLoudness {
    /// Works out the album's loudness (`LoudnessAnalysis.albumLoudness`) and peak (the highest track peak) from its
    /// measured tracks and writes them to every track of the album; with no measured track left, clears them. Only
    /// items with an album title form albums. Returns whether the album has figures now.
    static func update(_ album: UInt64, in db: SQLiteDatabase) throws(SQLiteError) -> Bool {
        var tracks: [(loudness: Double, seconds: Double)] = []
        var peak: Double?
        try db.query(
            """
            SELECT loudness, duration, peak FROM items
            WHERE album_id = ? AND album IS NOT NULL AND loudness_state = 1 AND loudness IS NOT NULL
            """, [.id(album)]
        ) { row in
            tracks.append((row.real(0), row.real(1)))
            peak = max(peak ?? 0, row.optionalReal(2) ?? 0)
        }
        let loudness = LoudnessAnalysis.albumLoudness(tracks)
        try db.run(
            "UPDATE items SET album_loudness = ?, album_peak = ? WHERE album_id = ? AND album IS NOT NULL",
            [.optional(loudness), .optional(loudness == nil ? nil : peak), .id(album)])
        return loudness != nil
    }
}
