// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Ambience",
    products: [
        .library(name: "Ambience", targets: ["Ambience"]),
        .executable(name: "ambience", targets: ["AmbienceCLI"]),
    ],
    targets: [
        .systemLibrary(name: "CSDL2", providers: [.apt(["libsdl2-dev"])]),
        .systemLibrary(name: "COpenAL", providers: [.apt(["libopenal-dev"])]),
        .systemLibrary(name: "CVorbisFile", providers: [.apt(["libvorbis-dev", "libogg-dev"])]),
        .systemLibrary(name: "CMPG123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        // No pkgConfig for libpulse: its .pc adds -D_REENTRANT, which SwiftPM warns about on every build.
        .systemLibrary(name: "CPulse", providers: [.apt(["libpulse-dev"])]),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSDLImage", providers: [.apt(["libsdl2-image-dev"])]),
        .systemLibrary(name: "CSDLTTF", providers: [.apt(["libsdl2-ttf-dev"])]),
        // Only the side-by-side benchmark links SDL_mixer.
        .systemLibrary(name: "CSDLMixer", providers: [.apt(["libsdl2-mixer-dev"])]),
        .target(
            name: "Ambience",
            dependencies: ["CSDL2", "COpenAL", "CVorbisFile", "CMPG123", "CPulse", "CDBus", "CSQLite", "CSDLImage"]
        ),
        .target(name: "AmbienceTool", dependencies: ["Ambience"]),
        .executableTarget(name: "AmbienceCLI", dependencies: ["AmbienceTool"]),
        .testTarget(name: "AmbienceTests", dependencies: ["Ambience", "AmbienceTool"]),
    ],
    swiftLanguageModes: [.v6]
)
