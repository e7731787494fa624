import AmbienceDecoding
import AmbiencePlatform
import Foundation
import Glibc

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
    /// Folders and files the walk could not look at (a folder it could not list, a path `stat` refused, one longer
    /// than PATH_MAX): what the index holds under them is kept, since the walk cannot tell whether it is gone.
    private(set) var unseen: [[UInt8]] = []
    /// Folders already walked, by device and inode: a symlink back up the tree is seen, not followed forever.
    private var visited: [FileIdentity: [UInt8]] = [:]

    /// Standard MIDI files: read (tags, length) without libfluidsynth, which only playing them needs.
    static let midiExtensions: Set<String> = ["mid", "midi", "kar"]
    /// Every file the scan reads: AAC and ALAC come in MP4; modules are the extensions libopenmpt opens, when it is
    /// installed.
    static let audioExtensions: Set<String> = Set(["ogg", "oga", "mp3", "wav", "flac", "opus", "m4a", "mp4"])
        .union(midiExtensions).union(ModuleDecoder.fileExtensions)
    static let playlistExtensions: Set<String> = ["m3u", "m3u8"]
    static let coverStems: [String] = ["cover", "folder"]
    static let coverExtensions: Set<String> = ["jpg", "jpeg", "png"]

    /// Walks `folder` (a missing folder has no files), and with `recursive` every folder below it.
    mutating func walk(_ folder: [UInt8], recursive: Bool) {
        let status: FileStatus
        do throws(Errno) { status = try FileStatus(rawPath: folder) } catch {
            if error.code != ENOENT && error.code != ENOTDIR { couldNotLookAt(folder, error, isFolder: true) }
            return
        }
        guard status.isDirectory else { return }
        var pending: [[UInt8]] = [folder]
        while let current = pending.popLast() {
            let status: FileStatus
            do throws(Errno) { status = try FileStatus(rawPath: current) } catch {
                if error.code != ENOENT { couldNotLookAt(current, error, isFolder: true) }
                continue
            }
            if let first = visited[status.identity] {
                warnings.append(
                    ScanIssue(
                        path: RawPath.display(current),
                        reason:
                            "symlink loop or second link: this folder was already scanned as \(RawPath.display(first)); not followed"
                    ))
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
            unseen.append(folder)
            report(folder, "cannot list folder (\(code)); what the index holds under it is kept")
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

            let status: FileStatus
            do throws(Errno) { status = try FileStatus(rawPath: path) } catch {
                let code = error.code
                if code != ENOENT && code != ELOOP {
                    // Not seen to be gone: kept in the index, and said (a folder too, which was once skipped
                    // without a word when its path was longer than PATH_MAX).
                    if isAudio || isPlaylist || mayBeFolder {
                        couldNotLookAt(path, error, isFolder: !(isAudio || isPlaylist))
                    }
                    continue
                }
                if isAudio || isPlaylist {
                    let reason =
                        code == ELOOP
                        ? "symlink loop (too many levels of symbolic links)"
                        : code == ENOENT && entry.kind == .symlink
                            ? "broken symlink (its target does not exist)"
                            : "cannot read (\(error))"
                    failed.append(ScanIssue(path: RawPath.display(path), reason: reason))
                } else if code == ELOOP {
                    warnings.append(
                        ScanIssue(
                            path: RawPath.display(path),
                            reason: "symlink loop (too many levels of symbolic links); not followed"))
                }
                continue
            }
            if status.isDirectory {
                subfolders.append(path)
                continue
            }
            let file = File(path: path, folder: folder, size: status.size, mtime: status.modified)
            if isAudio {
                audioFiles.append(file)
            } else if isPlaylist {
                playlistFiles.append(file)
            } else if let coverRank, status.isRegularFile {
                if status.size > Int64(MediaLibrary.maximumArtworkSize) {
                    warnings.append(
                        ScanIssue(
                            path: RawPath.display(path),
                            reason: "cover image is \(status.size) bytes, over the 16 MB limit; ignored"))
                } else if status.size > 0 {
                    coverCandidates.append((coverRank, path))
                }
            }
        }
        if let best = coverCandidates.min(by: {
            $0.rank != $1.rank ? $0.rank < $1.rank : $0.path.lexicographicallyPrecedes($1.path)
        }) {
            covers[folder] = best.path
        }
        return subfolders
    }

    /// Records a path `stat` or `opendir` refused for a reason other than its absence: kept in the index, reported
    /// (a failed file, a warning for a folder) and logged.
    private mutating func couldNotLookAt(_ path: [UInt8], _ error: Errno, isFolder: Bool) {
        unseen.append(path)
        let why =
            error.code == ENAMETOOLONG
            ? "path longer than the system allows (PATH_MAX, \(PATH_MAX) bytes)"
            : "cannot read (\(error))"
        if isFolder {
            report(path, "\(why); not scanned, what the index holds under it is kept")
        } else {
            failed.append(ScanIssue(path: RawPath.display(path), reason: "\(why); kept in the index as it was"))
            Log.warning("library: \(RawPath.display(path)): \(why); kept in the index as it was")
        }
    }

    private mutating func report(_ folder: [UInt8], _ reason: String) {
        warnings.append(ScanIssue(path: RawPath.display(folder), reason: reason))
        Log.warning("library: \(RawPath.display(folder)): \(reason)")
    }

    /// Whether `path` is under something the walk could not look at.
    func couldNotSee(_ path: [UInt8]) -> Bool { unseen.contains { RawPath.isInside(path, $0) } }

    /// `cover.*` before `folder.*`; nil for anything else.
    static func coverRank(_ name: [UInt8], ext: String?) -> Int? {
        guard let ext, coverExtensions.contains(ext) else { return nil }
        let stem = String(decoding: name.dropLast(ext.utf8.count + 1), as: UTF8.self).lowercased()
        return coverStems.firstIndex(of: stem)
    }
}
