import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The built stand-in has SDL_mixer 2.6.2's soname and exports every one of its 94 functions
/// (Tests/SDLMixer/exports-2.6.2.txt, measured from Debian's libSDL2_mixer-2.0.so.0), and no other `Mix_` name.
@Suite(
    .offTheCooperativePool, .timeLimit(.minutes(5)),
    .enabled(if: MixerStandIn.built, Comment(rawValue: MixerStandIn.missing)))
struct SDLMixerExportsTests {
    @Test func sonameIsSDLMixers() throws {
        let dynamic = try CAPI.run(["readelf", "-d", MixerStandIn.library])
        try #require(dynamic.status == 0, "readelf: \(dynamic.stderr)")
        #expect(dynamic.stdout.contains("Library soname: [libSDL2_mixer-2.0.so.0]"), "\(dynamic.stdout)")
    }

    @Test func exportsAreSDLMixer262s() throws {
        let listed = try String(
            contentsOfFile: BuildProducts.root + "/Tests/SDLMixer/exports-2.6.2.txt", encoding: .utf8
        )
        .split(separator: "\n").map(String.init)
        #expect(listed.count == 94)
        let symbols = try CAPI.run(["nm", "-D", "--defined-only", MixerStandIn.library])
        try #require(symbols.status == 0, "nm: \(symbols.stderr)")
        let exported = Set(
            symbols.stdout.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard words.count == 3, words[1] == "T", words[2].hasPrefix("Mix_") else { return nil }
                return String(words[2])
            })
        #expect(Set(listed).subtracting(exported).sorted() == [], "missing")
        #expect(exported.subtracting(listed).sorted() == [], "not SDL_mixer's")
    }
}
