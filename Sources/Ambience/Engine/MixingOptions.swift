extension EngineConfiguration {
    /// How OpenAL Soft resamples a voice: the mixer's `Resampler`, under the name games already use.
    public typealias Resampler = Ambience.Resampler
}
