import AmbiencePlatform
import CDBus
import CPulse
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// Nothing the package builds names an optional library: no `NEEDED` entry, no undefined `pa_`, `dbus_`, `IMG_`,
/// `openmpt_` or `fluid_`
/// symbol (a direct call that slipped past the tables would leave one in the shared library, which the linker allows).
/// Nor SDL_mixer, which only the benchmark's comparisons open (the stand-in, which is an SDL_mixer, is not listed).
@Suite(.offTheCooperativePool) struct LinkedLibraryTests {
    let sdlMixer = "libSDL2_mixer-2.0.so.0"
    static let products = ["ambience", "libambience-c.so", "gravity-wave", "MixerStress"]

    @Test(arguments: products)
    func aProductDoesNotLinkTheOptionalLibraries(_ product: String) throws {
        let path = BuildProducts.folder + "/" + product
        try #require(FileManager.default.fileExists(atPath: path), "\(path) is not built")
        let needed = try ELF.needed(path)
        #expect(needed.contains("libSDL2-2.0.so.0"), "the check reads the right list: \(needed)")
        #expect(Set(needed).isDisjoint(with: optionalLibraries + [sdlMixer]), "\(product) links \(needed)")
        let undefined = try Fixtures.run("nm", ["-D", "--undefined-only", path]).split(separator: "\n")
            .compactMap { $0.split(separator: " ").last.map(String.init) }
        #expect(undefined.contains { $0.hasPrefix("SDL_") }, "the check reads the right list")
        let optional = ["pa_", "dbus_", "IMG_", "openmpt_", "fluid_", "new_fluid_", "delete_fluid_", "Mix_"]
        #expect(undefined.filter { name in optional.contains { name.hasPrefix($0) } } == [])
    }

    @Test func theTestBinaryDoesNotLinkThemEither() throws {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #expect(Set(try ELF.needed(binary)).isDisjoint(with: optionalLibraries + [sdlMixer]))
    }
}
