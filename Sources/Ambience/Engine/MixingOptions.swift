extension EngineConfiguration {
    /// How OpenAL Soft resamples a voice: the mixer's `Resampler`, under the name games already use.
    public typealias Resampler = Ambience.Resampler
    /// Which code carries a device output's mix to the sound server: the output's `OutputBackend`, under the name
    /// games already use.
    public typealias OutputBackend = Ambience.OutputBackend
}
