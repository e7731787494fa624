/// Why a call to a desktop service (the sound server, the session bus, an MPRIS player) failed.
///
/// Shared by the PulseAudio and D-Bus code in `Desktop/`. Every case names what was being done, so the message
/// reads on its own: `ambience: PulseAudio server unix:/run/user/1000/pulse/native: Connection refused`.
public enum DesktopError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No sound server answered: not running, the socket is gone, or the connection was lost.
    case serverUnavailable(String)
    /// No session bus could be reached.
    case busUnavailable(String)
    /// A call did not finish in time; the payload says what timed out.
    case timeout(String)
    /// The other side refused the call: a D-Bus error name, or the sound server's error, with a message.
    case remoteError(name: String, message: String)
    /// The service is there but cannot do this.
    case unsupported(String)
    /// The playlist file for a desktop player could not be written: its path and why.
    case playlistNotWritten(String, reason: String)
    /// The system library the service is reached through (libpulse, libdbus-1) could not be loaded, or lacks a
    /// function: what was being reached, the library and the loader's reason.
    case libraryUnavailable(String)

    public var description: String {
        switch self {
        case .serverUnavailable(let detail): "sound server unavailable: \(detail)"
        case .busUnavailable(let detail): "session bus unavailable: \(detail)"
        case .timeout(let what): "timed out: \(what)"
        case .remoteError(let name, let message): "\(name): \(message)"
        case .unsupported(let detail): "unsupported: \(detail)"
        case .playlistNotWritten(let path, let reason): "\(path): cannot write the playlist: \(reason)"
        case .libraryUnavailable(let detail): "library unavailable: \(detail)"
        }
    }
}
