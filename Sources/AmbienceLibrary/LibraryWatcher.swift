import AmbiencePlatform
import Foundation
import Glibc

/// Why the watcher could not start.
struct LibraryWatcherError: Error, CustomStringConvertible, Sendable {
    var description: String
}

/// Watches the library folders with inotify and hands the folders that changed to `onChange`, on its own thread.
///
/// inotify is not recursive: every folder gets a watch, and new folders get one as they appear. Events are
/// collected until the folder has been quiet for `quietPeriod` (a file being copied in makes many events but one
/// change), and only those that can change the library count: audio files, playlists and cover images written,
/// moved or deleted, and folders created, moved or deleted.
///
/// Owns the inotify instance, the waker and the thread. The thread waits on the inotify descriptor alongside the
/// waker, so `stop()` wakes it, then joins it.
final class LibraryWatcher: @unchecked Sendable {
    typealias Scope = MediaLibrary.ScanScope

    private let inotify: Inotify
    private let waker: Waker
    private let onChange: @Sendable ([Scope]) -> Void
    private let roots: [[UInt8]]
    private let quietPeriod: Double
    private let worker = Lock<WorkerThread?>(nil)
    // Only the watcher thread touches these once it has started.
    private var folders: [Int32: [UInt8]] = [:]

    private static let mask: UInt32 = UInt32(
        IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
            | IN_DELETE_SELF | IN_MOVE_SELF)

    /// Watches every folder under `roots` (synchronously: a change made right after `init` returns is seen), then
    /// starts the thread.
    init(roots: [[UInt8]], quietPeriod: Double = 0.2, onChange: @escaping @Sendable ([Scope]) -> Void)
        throws(LibraryWatcherError)
    {
        do throws(Errno) { inotify = try Inotify() } catch {
            throw LibraryWatcherError(description: "inotify unavailable (\(error))")
        }
        do throws(Errno) { waker = try Waker() } catch {
            throw LibraryWatcherError(description: "cannot make the watcher's waker (\(error))")
        }
        self.roots = roots
        self.quietPeriod = quietPeriod
        self.onChange = onChange
        var failure: String?
        for root in roots { failure = addWatches(under: root) ?? failure }
        if folders.isEmpty { throw LibraryWatcherError(description: failure ?? "no library folder to watch") }
        let thread = WorkerThread(name: "ambience.library-watcher") { [self] control in run(control) }
        worker.withLock { $0 = thread }
    }

    /// Stops the thread and waits for it (and any re-indexing it is doing) to finish.
    func stop() {
        guard
            let thread = worker.withLock({ worker in
                defer { worker = nil }; return worker
            })
        else { return }
        waker.wake()
        thread.stop()
    }

    // MARK: Watches

    /// Adds a watch to `folder` and every folder below it (following symlinks, each real folder once per call).
    /// A folder already watched keeps its watch and gets its new path (it was moved). Returns the last failure, if
    /// any (for example the per-user watch limit).
    @discardableResult
    private func addWatches(under folder: [UInt8]) -> String? {
        var failure: String?
        var pending = [folder]
        var visited: Set<FileIdentity> = []
        while let current = pending.popLast() {
            guard let status = RawPath.fileStatus(current), status.isDirectory,
                visited.insert(status.identity).inserted
            else { continue }
            let wd: Int32
            do throws(Errno) { wd = try inotify.addWatch(rawPath: current, mask: Self.mask) } catch {
                failure =
                    "\(RawPath.display(current)): cannot watch (\(error))"
                    + (error.code == ENOSPC ? "; raise fs.inotify.max_user_watches" : "")
                continue
            }
            folders[wd] = current
            guard case .success(let entries) = RawPath.listFolder(current) else { continue }
            for entry in entries.reversed() where entry.name.first != UInt8(ascii: ".") {
                if entry.kind == .folder || entry.kind == .symlink || entry.kind == .unknown {
                    pending.append(RawPath.join(current, entry.name))
                }
            }
        }
        return failure
    }

    // MARK: The thread

    private func run(_ control: WorkerThread.Control) {
        var pending: Set<Scope> = []
        var quietDeadline = 0
        var firstPending = 0
        while true {
            let now = monotonicNanoseconds()
            var timeout: Duration?
            if !pending.isEmpty {
                // Quiet for `quietPeriod`, but never held back more than a second by a steady trickle of events.
                let due = min(quietDeadline, firstPending + 1_000_000_000)
                timeout = .nanoseconds(max(due - now, 0))
            }
            let outcome = waker.wait(alongside: inotify.descriptor, timeout: timeout)
            if outcome.failure != nil || outcome.woken || control.isStopRequested { break }
            if outcome.ready {
                let before = pending.count
                for event in inotify.readEvents() {
                    handle(wd: event.watch, mask: event.mask, name: event.name, into: &pending)
                }
                if pending.count > 0 {
                    if before == 0 { firstPending = monotonicNanoseconds() }
                    quietDeadline = monotonicDeadline(afterSeconds: quietPeriod)
                }
            }
            if !pending.isEmpty && monotonicNanoseconds() >= min(quietDeadline, firstPending + 1_000_000_000) {
                let scopes = Array(pending)
                pending.removeAll()
                onChange(scopes)
            }
        }
    }

    private func handle(wd: Int32, mask: UInt32, name: [UInt8], into pending: inout Set<Scope>) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were lost: look at everything again.
            for root in roots { pending.insert(Scope(folder: root, recursive: true)) }
            return
        }
        guard let folder = folders[wd] else { return }
        if mask & UInt32(IN_IGNORED) != 0 {
            folders[wd] = nil
            return
        }
        if name.isEmpty {
            // The watched folder itself was deleted or moved away.
            if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                pending.insert(Scope(folder: folder, recursive: true))
            }
            return
        }
        if name.first == UInt8(ascii: ".") { return }
        let path = RawPath.join(folder, name)
        if mask & UInt32(IN_ISDIR) != 0 {
            if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { addWatches(under: path) }
            pending.insert(Scope(folder: path, recursive: true))
            return
        }
        let ext = RawPath.lowercasedExtension(name)
        let matters =
            ext.map {
                LibraryWalk.audioExtensions.contains($0) || LibraryWalk.playlistExtensions.contains($0)
                    || LibraryWalk.coverExtensions.contains($0)
            } ?? false
        if mask & UInt32(IN_CREATE) != 0 {
            // A file being created is looked at when it is closed; a symlink is never written, so it counts now.
            guard let link = RawPath.fileStatus(path, followSymlinks: false), link.kind == .symbolicLink else {
                return
            }
            if let target = RawPath.fileStatus(path), target.isDirectory {
                addWatches(under: path)
                pending.insert(Scope(folder: path, recursive: true))
                return
            }
        }
        if matters { pending.insert(Scope(folder: folder, recursive: false)) }
    }
}
