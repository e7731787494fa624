import Glibc

/// The names in a folder, read with `opendir`/`readdir` on raw bytes, so that no name is lost (Linux file names need
/// not be UTF-8).
package enum Directory {
    /// One name in a folder, with the type the file system reported for it.
    package struct Entry: Sendable, Equatable {
        package var name: [UInt8]
        /// Nil when the file system does not say (`DT_UNKNOWN`): ask `FileStatus`.
        package var kind: FileStatus.Kind?
    }

    /// The entries of the folder at `rawPath`, without `.` and `..`, sorted by bytes.
    package static func entries(rawPath: [UInt8]) throws(Errno) -> [Entry] {
        guard !rawPath.isEmpty, !rawPath.contains(0) else { throw Errno(ENOENT) }
        let opened = (rawPath + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { opendir($0.baseAddress!) }
        }
        guard let folder = opened else { throw .current }
        defer { closedir(folder) }
        var entries: [Entry] = []
        while true {
            errno = 0
            guard let entry = readdir(folder) else {
                if errno != 0 { throw .current }
                break
            }
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            entries.append(Entry(name: name, kind: kind(Int32(entry.pointee.d_type))))
        }
        entries.sort { $0.name.lexicographicallyPrecedes($1.name) }
        return entries
    }

    private static func kind(_ type: Int32) -> FileStatus.Kind? {
        switch type {
        case Int32(DT_UNKNOWN): nil
        case Int32(DT_REG): .regular
        case Int32(DT_DIR): .directory
        case Int32(DT_LNK): .symbolicLink
        case Int32(DT_SOCK): .socket
        case Int32(DT_FIFO): .fifo
        case Int32(DT_CHR): .characterDevice
        case Int32(DT_BLK): .blockDevice
        default: .other
        }
    }
}
