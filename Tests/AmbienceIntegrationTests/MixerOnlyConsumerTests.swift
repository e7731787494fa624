import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// A game that depends on the `AmbienceMixer` product alone (Tests/ConsumerPackages/MixerOnly, built by
/// scripts/build-consumer-packages.sh, which test.sh runs after the main build): it plays a tone through the mixer
/// offline and checks the render itself, and its binary links OpenAL Soft and none of the engine's other libraries.
@Suite(.offTheCooperativePool) struct MixerOnlyConsumerTests {
    static let binary = BuildProducts.root + "/.build/consumer-packages/MixerOnly/debug/MixerOnly"

    /// Sonames (by prefix) of what the mixer must not bring: the decoders', the library's, the desktop's, SDL.
    static let foreign = [
        "libsqlite3", "libz.", "libSDL2", "libavformat", "libavcodec", "libavutil", "libdbus-1", "libpulse",
        "libsndfile", "libvorbis", "libogg", "libmpg123", "libFLAC", "libopus", "libebur128", "libopenmpt",
        "libfluidsynth"
    ]

    static func requireBuilt() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: binary),
            "\(binary) is not built: run scripts/build-consumer-packages.sh (test.sh does)")
    }

    @Test func aGameOnTheMixerAlonePlaysAToneOffline() throws {
        try Self.requireBuilt()
        let output = try Fixtures.run(Self.binary, [], timeout: 60)
        #expect(output.contains("MixerOnly: ok"), "\(output)")
    }

    @Test func itsBinaryLinksOpenALSoftAndNoneOfTheEnginesOtherLibraries() throws {
        try Self.requireBuilt()
        let needed = try ELF.needed(Self.binary)
        #expect(needed.contains("libopenal.so.1"), "the check reads the right list: \(needed)")
        let foreign = needed.filter { name in Self.foreign.contains { name.hasPrefix($0) } }
        #expect(foreign == [], "MixerOnly links \(needed)")
    }
}
