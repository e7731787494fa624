import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// Suites that open real-time devices in this process (SDL's audio driver is process-wide), start programs that do
/// (their route monitors follow the shared server's default sink), or change the shared PulseAudio server run inside
/// this one, one at a time, so that none of them moves a sink from under another.
@Suite(.offTheCooperativePool, .serialized) enum SoundServerSuites {}
