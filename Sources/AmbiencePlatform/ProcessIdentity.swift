import Glibc

/// Who this process is to the system.
package enum ProcessIdentity {
    /// The process id (`getpid`): what PulseAudio records as a stream's `application.process.id`.
    package static var current: Int32 { getpid() }

    /// The path of the running program (`/proc/self/exe`'s target), nil when the kernel does not say.
    package static var executablePath: String? { FilePaths.linkTarget("/proc/self/exe") }

    /// The paths of the files mapped into this process (`/proc/self/maps`), in the order of their mappings and
    /// each once: the shared libraries the loader gave it. Empty when the table cannot be read.
    package static var mappedFiles: [String] {
        guard let table = try? FileDescriptor(opening: "/proc/self/maps", flags: O_RDONLY).readToEnd() else {
            return []
        }
        var seen: Set<String> = [], files: [String] = []
        for line in table.split(separator: UInt8(ascii: "\n")) {
            // "start-end perms offset dev inode path": the path, when there is one, is the only field that starts with /.
            guard let slash = line.firstIndex(of: UInt8(ascii: "/")) else { continue }
            let path = String(decoding: line[slash...], as: UTF8.self)
            if seen.insert(path).inserted { files.append(path) }
        }
        return files
    }
}
