import Glibc

/// The calls on a path that are not an open file: whether it is there or readable, what it resolves to, making a
/// folder, linking and removing. A path with a NUL in it names no file (ENOENT, or false): C would see only its first
/// part.
package enum FilePaths {
    /// Whether something is at `path` (`access(F_OK)`: a symbolic link counts only when its target is there).
    package static func exists(_ path: String) -> Bool {
        !path.utf8.contains(0) && access(path, F_OK) == 0
    }

    /// Whether this process may read `path`; the reason when not.
    package static func checkReadable(_ path: String) throws(Errno) {
        guard !path.utf8.contains(0) else { throw Errno(ENOENT) }
        guard access(path, R_OK) == 0 else { throw .current }
    }

    /// Whether this process may read `path`.
    package static func isReadable(_ path: String) -> Bool {
        (try? checkReadable(path)) != nil
    }

    /// `path` absolute, with every symbolic link and `.` or `..` resolved (`realpath`); nil when it does not exist.
    package static func resolved(_ path: String) -> String? {
        guard !path.utf8.contains(0), let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Makes the folder `path` (its parent must exist); a folder or anything else already there is not an error,
    /// so two threads making the same folder both succeed.
    package static func makeFolder(_ path: String, mode: mode_t = 0o755) throws(Errno) {
        try makeFolder(rawPath: Array(path.utf8), mode: mode)
    }

    /// `makeFolder` for a path given as raw bytes.
    package static func makeFolder(rawPath: [UInt8], mode: mode_t = 0o755) throws(Errno) {
        guard !rawPath.isEmpty, !rawPath.contains(0) else { throw Errno(ENOENT) }
        let status = (rawPath + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { mkdir($0.baseAddress!, mode) }
        }
        guard status == 0 || errno == EEXIST else { throw .current }
    }

    /// A second name, `newName`, for the file at `path` (`link`): never replaces what is at `newName` (EEXIST).
    package static func link(_ path: String, to newName: String) throws(Errno) {
        guard !path.utf8.contains(0), !newName.utf8.contains(0) else { throw Errno(ENOENT) }
        guard Glibc.link(path, newName) == 0 else { throw .current }
    }

    /// Removes the name `path` (`unlink`; not a folder).
    package static func remove(_ path: String) throws(Errno) {
        guard !path.utf8.contains(0) else { throw Errno(ENOENT) }
        guard unlink(path) == 0 else { throw .current }
    }

    /// Whether this process may make and remove names in the folder `path` (`access(W_OK | X_OK)`).
    package static func mayChangeNames(in path: String) -> Bool {
        !path.utf8.contains(0) && access(path, W_OK | X_OK) == 0
    }

    /// Makes a symbolic link at `path` whose target is `target` (`symlink`); never replaces what is at `path`.
    package static func makeSymbolicLink(at path: String, pointingTo target: String) throws(Errno) {
        guard !path.utf8.contains(0), !target.utf8.contains(0) else { throw Errno(ENOENT) }
        guard symlink(target, path) == 0 else { throw .current }
    }

    /// What the symbolic link at `path` points to (`readlink`), as raw text; nil when `path` is not a link.
    package static func linkTarget(_ path: String) -> String? {
        guard !path.utf8.contains(0) else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes the empty folder `path` (`rmdir`).
    package static func removeFolder(_ path: String) throws(Errno) {
        guard !path.utf8.contains(0) else { throw Errno(ENOENT) }
        guard rmdir(path) == 0 else { throw .current }
    }

    /// Makes a new folder, readable only by this user, named `prefix` and six random characters inside `folder`
    /// (`mkdtemp`); returns its path. Never an existing folder: another process cannot have made it first.
    package static func makeTemporaryFolder(in folder: String, prefix: String) throws(Errno) -> String {
        guard !folder.utf8.contains(0), !prefix.utf8.contains(0) else { throw Errno(ENOENT) }
        var template = Array((folder + "/" + prefix + "XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else { throw .current }
        // mkdtemp wrote the folder's name over the template's Xs.
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The process's working folder (`getcwd`); nil when it cannot be named (removed, or out of reach).
    package static var workingFolder: String? {
        guard let folder = getcwd(nil, 0) else { return nil }
        defer { free(folder) }
        return String(cString: folder)
    }
}
