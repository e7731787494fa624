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

    /// Runs a tool and fails the test with its stderr when it does not exit 0.
    @discardableResult
    func run(_ tool: String, _ arguments: [String]) throws -> String {
        try Fixtures.run(tool, arguments)
    }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String], environment: [String: String]? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError.toolFailed("\(tool) \(arguments.joined(separator: " ")): \(String(decoding: errData, as: UTF8.self))")
        }
        return String(decoding: outData, as: UTF8.self)
    }

    /// A sine WAV made by sox. `bits` 8/16/24/32, or `float: true` for 32-bit float.
    func sineWAV(_ name: String, hz: Double = 440, seconds: Double = 1, rate: Int = 48_000, channels: Int = 1,
                 bits: Int = 16, float: Bool = false, amplitude: Double = 0.5) throws -> String {
        let out = path(name)
        var args = ["-n", "-r", "\(rate)", "-c", "\(channels)"]
        args += float ? ["-e", "floating-point", "-b", "32"] : ["-b", "\(bits)"]
        args += [out, "synth", "\(seconds)", "sine", "\(hz)", "vol", "\(amplitude)"]
        try run("sox", args)
        return out
    }

    /// An Ogg Vorbis sine with optional tags, via oggenc.
    func sineOgg(_ name: String, hz: Double = 440, seconds: Double = 1, rate: Int = 48_000, channels: Int = 1,
                 tags: [String] = []) throws -> String {
        let wav = try sineWAV(name + ".src.wav", hz: hz, seconds: seconds, rate: rate, channels: channels)
        let out = path(name)
        try run("oggenc", ["-Q", "-q", "6"] + tags.flatMap { ["-c", $0] } + ["-o", out, wav])
        return out
    }

    /// A lame-encoded MP3 sine (with the LAME gapless header), with optional extra lame flags for tags.
    func sineMP3(_ name: String, hz: Double = 440, seconds: Double = 1, rate: Int = 44_100, channels: Int = 1,
                 lameFlags: [String] = []) throws -> String {
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
