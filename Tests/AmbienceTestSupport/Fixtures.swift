import Foundation

/// Makes test audio with the same tools a person would use (sox, oggenc, lame), in a private temporary folder.
final class Fixtures {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ambience-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The names of the files in the folder, sorted.
    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// Runs a tool and fails the test with its stderr when it does not exit 0.
    @discardableResult
    func run(_ tool: String, _ arguments: [String]) throws -> String {
        try Fixtures.run(tool, arguments)
    }

    /// Runs a tool (found on PATH) in `childEnvironment(environment)`; throws with its stderr when it does not exit 0
    /// within `timeout` seconds.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 120)
        throws -> String
    {
        let output = try ChildProcess.run(
            [tool] + arguments, environment: childEnvironment(environment), timeout: timeout)
        let command = ([tool] + arguments).joined(separator: " ")
        guard !output.timedOut else {
            throw FixtureError.toolFailed("\(command): still running after \(timeout) s, killed")
        }
        guard output.status == 0, !output.killedBySignal else {
            throw FixtureError.toolFailed("\(command): \(String(decoding: output.stderr, as: UTF8.self))")
        }
        return String(decoding: output.stdout, as: UTF8.self)
    }

    /// A sine WAV made by sox. `bits` 8/16/24/32, or `float: true` for 32-bit float.
    func sineWAV(
        _ name: String, hz: Double = 440, seconds: Double = 1, rate: Int = 48_000, channels: Int = 1,
        bits: Int = 16, float: Bool = false, amplitude: Double = 0.5
    ) throws -> String {
        let out = path(name)
        var args = ["-n", "-r", "\(rate)", "-c", "\(channels)"]
        args += float ? ["-e", "floating-point", "-b", "32"] : ["-b", "\(bits)"]
        args += [out, "synth", "\(seconds)", "sine", "\(hz)", "vol", "\(amplitude)"]
        try run("sox", args)
        return out
    }

    /// An Ogg Vorbis sine with optional tags, via oggenc.
    func sineOgg(
        _ name: String, hz: Double = 440, seconds: Double = 1, rate: Int = 48_000, channels: Int = 1,
        tags: [String] = []
    ) throws -> String {
        let wav = try sineWAV(name + ".src.wav", hz: hz, seconds: seconds, rate: rate, channels: channels)
        let out = path(name)
        try run("oggenc", ["-Q", "-q", "6"] + tags.flatMap { ["-c", $0] } + ["-o", out, wav])
        return out
    }

    /// A lame-encoded MP3 sine (with the LAME gapless header), with optional extra lame flags for tags.
    func sineMP3(
        _ name: String, hz: Double = 440, seconds: Double = 1, rate: Int = 44_100, channels: Int = 1,
        lameFlags: [String] = []
    ) throws -> String {
        let wav = try sineWAV(name + ".src.wav", hz: hz, seconds: seconds, rate: rate, channels: channels)
        let out = path(name)
        try run("lame", ["--quiet", "-b", "192"] + lameFlags + [wav, out])
        return out
    }

    func write(_ name: String, bytes: [UInt8]) throws -> String {
        let out = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: out))
        return out
    }

    func bytes(of path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
}

enum FixtureError: Error { case toolFailed(String) }

// MARK: - Media library fixtures

extension Fixtures {
    /// Creates a folder (and its parents) under the fixture directory; returns its path.
    @discardableResult
    func folder(_ relative: String) throws -> String {
        let out = path(relative)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        return out
    }

    /// A 16-bit sine WAV shared by the encoders below (lame misreads float WAVs), made once per fixture.
    private func sourceWAV(rate: Int) throws -> String {
        let name = "library-source-\(rate).wav"
        if FileManager.default.fileExists(atPath: path(name)) { return path(name) }
        return try sineWAV(name, hz: 440, seconds: 0.5, rate: rate, channels: 1, bits: 16)
    }

    /// A half-second Ogg Vorbis at `relative` (folders created) with UTF-8 comments such as "ARTIST=Björk".
    @discardableResult
    func libraryOgg(_ relative: String, _ comments: [String] = []) throws -> String {
        let out = path(relative)
        try FileManager.default.createDirectory(
            atPath: (out as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try run(
            "oggenc",
            ["-Q", "-q", "2", "--utf8"] + comments.flatMap { ["-c", $0] } + ["-o", out, try sourceWAV(rate: 48_000)])
        return out
    }

    /// A half-second lame MP3 at `relative` with an ID3v2 tag only, UTF-16 text (so any script survives), from lame
    /// options such as `["--ta", "Sigur Rós"]`.
    @discardableResult
    func libraryMP3(_ relative: String, _ lameTags: [String] = []) throws -> String {
        let out = path(relative)
        try FileManager.default.createDirectory(
            atPath: (out as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try run(
            "lame",
            ["--quiet", "-b", "64", "--id3v2-only", "--id3v2-utf16"] + lameTags + [try sourceWAV(rate: 44_100), out])
        return out
    }

    /// music/: two albums, a compilation (one album, two artists) and a single, in Ogg and MP3, with non-ASCII tags
    /// (the media library's suites and the `library` command's).
    func libraryCollection() throws {
        try libraryOgg(
            "music/Björk/Post/1.ogg",
            [
                "TITLE=Hyperballad", "ARTIST=Björk", "ALBUM=Post",
                "GENRE=Électronique", "TRACKNUMBER=2", "COMPOSER=Björk"
            ])
        try libraryOgg(
            "music/Björk/Post/2.ogg", ["TITLE=Army of Me", "ARTIST=Björk", "ALBUM=Post", "TRACKNUMBER=1/11"])
        try libraryMP3(
            "music/Sigur Rós/Ágætis byrjun/1.mp3",
            ["--tt", "Svefn-g-englar", "--ta", "Sigur Rós", "--tl", "Ágætis byrjun", "--tg", "Post-Rock", "--tn", "1"])
        try libraryMP3(
            "music/Sigur Rós/Ágætis byrjun/2.mp3",
            ["--tt", "Starálfur", "--ta", "Sigur Rós", "--tl", "Ágætis byrjun", "--tn", "2/9"])
        try libraryOgg(
            "music/Various/Now Ambient/1.ogg", ["TITLE=Xtal", "ARTIST=Aphex Twin", "ALBUM=Now Ambient", "TRACKNUMBER=1"]
        )
        try libraryMP3(
            "music/Various/Now Ambient/2.mp3",
            ["--tt", "An Ending", "--ta", "Brian Eno", "--tl", "Now Ambient", "--tn", "2"])
        try libraryOgg(
            "music/Nena/99.ogg", ["TITLE=99 Luftballons", "ARTIST=Nena", "ALBUM=99 Luftballons", "GENRE=Pop"])
    }

    /// Replaces an Ogg file's comments, one per line, via `vorbiscomment` (which accepts only valid UTF-8).
    func rewriteOggComments(_ file: String, lines: [String]) throws {
        let list = path("comments-\(UUID().uuidString).txt")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: list))
        try run("vorbiscomment", ["-w", "-R", "-c", list, file])
    }
}
