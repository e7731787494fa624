/// How OpenAL Soft resamples a voice whose sound is at another rate than the mix or whose pitch is not 1 (its
/// per-source resampler, `AL_SOFT_source_resampler`). Measured on 1,024 voices at pitch 0.9–1.1 (`ambience bench
/// --openal-options`; README, "OpenAL Soft's options"): against the best resampler's render, `linear` is about
/// 23 dB SNR at the lowest cost, `sinc12` about 33 dB at some three times its mixing cost, and `sinc24` about
/// 4.5 times; `cubic` costs about twice as much and sounds like `linear`; `point` is 10 dB worse and no cheaper.
/// Every voice's source (sounds and stream voices) uses one, chosen with `EngineConfiguration.resampler`.
public enum Resampler: String, Sendable, CaseIterable {
    /// The nearest sample: aliased and gritty, for a deliberately lo-fi sound.
    case point
    /// Linear interpolation, OpenAL Soft's default: the cheapest that is clean enough for effects in a crowd.
    case linear
    /// Four-point cubic interpolation.
    case cubic
    /// A band-limited sinc with 12 points (OpenAL Soft's "11th order Sinc"): little aliasing, for a few voices
    /// whose pitch moves a lot (engines, music played as voices).
    case sinc12
    /// A band-limited sinc with 24 points ("23rd order Sinc"): OpenAL Soft's best.
    case sinc24
}
