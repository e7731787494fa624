import Glibc

/// An inotify instance: watches on folders, and the events they report. Non-blocking and close-on-exec; the
/// descriptor is closed with the object. Wait for events with `Waker.wait(alongside: descriptor)`.
///
/// Owned by one thread at a time.
package final class Inotify {
    /// One event: the watch it came from (as `addWatch` returned it), what happened (`IN_*` bits) and the name in
    /// the watched folder it happened to (empty for the folder itself).
    package struct Event: Sendable, Equatable {
        package var watch: Int32
        package var mask: UInt32
        package var name: [UInt8]
    }

    private let file: FileDescriptor
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    package init() throws(Errno) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw .current }
        file = FileDescriptor(adopting: fd)
    }

    /// The descriptor to wait on: readable when events are queued.
    package var descriptor: Int32 { file.descriptor }

    /// Watches the folder or file at `rawPath` for `mask`; returns the watch's number (the same number for a node
    /// already watched). ENOSPC is the per-user watch limit (`fs.inotify.max_user_watches`).
    package func addWatch(rawPath: [UInt8], mask: UInt32) throws(Errno) -> Int32 {
        guard !rawPath.isEmpty, !rawPath.contains(0) else { throw Errno(ENOENT) }
        let watch = (rawPath + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { inotify_add_watch(file.descriptor, $0.baseAddress!, mask) }
        }
        guard watch >= 0 else { throw .current }
        return watch
    }

    /// Every event queued now (none when nothing is: the descriptor is non-blocking).
    package func readEvents() -> [Event] {
        var events: [Event] = []
        while true {
            let read = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try file.read(into: raw.baseAddress!, count: raw.count) }
            }
            guard case .success(let got) = read, got > 0 else { return events }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= got {
                let (watch, mask, length) = buffer.withUnsafeBytes { raw in
                    (
                        raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                let nameStart = offset + headerSize
                let name = Array(buffer[nameStart..<min(nameStart + length, got)].prefix { $0 != 0 })
                offset = nameStart + length
                events.append(Event(watch: watch, mask: mask, name: name))
            }
        }
    }
}
