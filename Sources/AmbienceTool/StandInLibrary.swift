import Ambience
import AmbiencePlatform

/// The SDL_mixer stand-in (the package's `SDL2_mixer` product) as `ambience run` puts it in front of a program: a
/// folder holding it under SDL_mixer's soname, for the front of the program's `LD_LIBRARY_PATH`.
///
/// Where it is looked for, first found wins:
/// 1. `AMBIENCE_SDL_MIXER`, when set: the library file to use, whatever its name (a build elsewhere; the tests use it
///    to put a copy of any SDL_mixer in front of a program). A file that is not there is an error, not a fall-through.
/// 2. A build: `libSDL2_mixer.so` beside the `ambience` executable (`.build/<config>/`).
/// 3. An install: `PREFIX/lib/ambience/sdl2-mixer/libSDL2_mixer-2.0.so.0`, for the command in `PREFIX/bin`
///    (scripts/install.sh puts it there, never in place of the system's SDL_mixer).
///
/// SwiftPM names the library `libSDL2_mixer.so` and makes no link under its soname, which is the name programs ask
/// the loader for. For 1 and 2 the command makes a private folder (under `XDG_RUNTIME_DIR`, else the temporary
/// folder) holding the link `libSDL2_mixer-2.0.so.0` to the library; `remove()` deletes it when the program has ended.
struct StandInLibrary {
    /// The variable that names the library to use.
    static let overrideVariable = "AMBIENCE_SDL_MIXER"
    /// SDL_mixer 2's soname: what programs linked against it load.
    static let soname = "libSDL2_mixer-2.0.so.0"
    /// The product's file in a build.
    static let buildName = "libSDL2_mixer.so"
    /// Its folder in an install, under the prefix.
    static let installFolder = "lib/ambience/sdl2-mixer"

    /// The folder to put first on the program's `LD_LIBRARY_PATH`.
    let folder: String
    /// The library file the soname leads to.
    let library: String
    /// Whether `folder` was made for this run (and `remove()` deletes it).
    private let isPrivate: Bool

    /// Finds the stand-in for the command at `executable` (its real path); throws a failure that says where it
    /// looked.
    static func find(executable: String, environment: [String: String]) throws(ToolFailure) -> StandInLibrary {
        if let named = environment[overrideVariable], !named.isEmpty {
            guard isFile(named) else {
                throw ToolFailure("run: \(overrideVariable) names \(named), which is not a library file")
            }
            return try linked(absolute(named), environment: environment)
        }
        let bin = parent(of: executable)
        let built = bin + "/" + buildName
        if isFile(built) { return try linked(built, environment: environment) }
        let installed = parent(of: bin) + "/" + installFolder
        if isFile(installed + "/" + soname) {
            return StandInLibrary(folder: installed, library: installed + "/" + soname, isPrivate: false)
        }
        throw ToolFailure(
            "run: no SDL_mixer stand-in: neither \(built) (a build: swift build --product SDL2_mixer) nor "
                + "\(installed)/\(soname) (an install: scripts/install.sh) exists, and \(overrideVariable) is not set")
    }

    /// Deletes the private folder, if this run made one.
    func remove() {
        guard isPrivate else { return }
        try? FilePaths.remove(folder + "/" + Self.soname)
        try? FilePaths.removeFolder(folder)
    }

    /// A private folder holding the soname's link to `library`.
    private static func linked(_ library: String, environment: [String: String]) throws(ToolFailure)
        -> StandInLibrary
    {
        let candidates: [String] = [environment["XDG_RUNTIME_DIR"], environment["TMPDIR"]].compactMap { $0 }
        let base = candidates.first { !$0.isEmpty && FilePaths.mayChangeNames(in: $0) } ?? "/tmp"
        let folder: String
        do throws(Errno) {
            folder = try FilePaths.makeTemporaryFolder(in: base, prefix: "ambience-run.")
        } catch {
            throw ToolFailure("run: cannot make a folder in \(base): \(error)")
        }
        do throws(Errno) {
            try FilePaths.makeSymbolicLink(at: folder + "/" + soname, pointingTo: library)
        } catch {
            try? FilePaths.removeFolder(folder)
            throw ToolFailure("run: cannot link \(library) in \(folder): \(error)")
        }
        return StandInLibrary(folder: folder, library: library, isPrivate: true)
    }

    private static func isFile(_ path: String) -> Bool {
        (try? FileStatus(path: path))?.isRegularFile ?? false
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        guard let folder = FilePaths.workingFolder else { return path }
        return folder + "/" + path
    }
}
