/// Why the mixer could not be set up.
public enum MixerSetupError: Error, CustomStringConvertible, Sendable, Equatable {
    /// OpenAL Soft lacks the loopback device (`ALC_SOFT_loopback`) the mixer renders through.
    case loopbackUnavailable
    /// OpenAL Soft cannot render 32-bit float stereo at this rate.
    case formatUnsupported(sampleRate: Int)
    /// OpenAL Soft refused to make the mixer's context (`code` is its ALC error).
    case contextFailed(code: Int32)

    public var description: String {
        switch self {
        case .loopbackUnavailable: "OpenAL Soft: the loopback device (ALC_SOFT_loopback) is not available"
        case .formatUnsupported(let rate): "OpenAL Soft: cannot render stereo float at \(rate) Hz"
        case .contextFailed(let code): "OpenAL Soft: cannot create a context (ALC error 0x\(String(code, radix: 16)))"
        }
    }
}
