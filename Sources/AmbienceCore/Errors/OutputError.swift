/// Why real-time output could not start.
public enum OutputError: Error, CustomStringConvertible, Sendable, Equatable {
    /// SDL refused to start or open the device; its message.
    case sdl(String)
    /// No SDL audio driver would start; `tried` lists the drivers tried.
    case noDriver(tried: [String])
    /// Opening the device did not finish within `seconds`: the sound server (or the session bus SDL registers on)
    /// accepted the connection but never answered, as a frozen server does. SDL would have waited for ever.
    case notAnswering(seconds: Double)
    /// The libpulse output could not open: no libpulse, no server, or the server refused the stream; the reason.
    case pulse(String)

    public var description: String {
        switch self {
        case .sdl(let message): "SDL audio: \(message)"
        case .noDriver(let tried): "SDL audio: no driver could open a device (tried \(tried.joined(separator: ", ")))"
        case .notAnswering(let seconds):
            "audio output: the sound server did not answer within \(seconds) s (is it frozen?); no device was opened"
        case .pulse(let message): "libpulse output: \(message)"
        }
    }
}
