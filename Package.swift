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
        .target(
            name: "Ambience",
            dependencies: ["CSDL2", "COpenAL", "CVorbisFile", "CMPG123"]
        ),
        .target(name: "AmbienceTool", dependencies: ["Ambience"]),
        .executableTarget(name: "AmbienceCLI", dependencies: ["AmbienceTool"]),
        .testTarget(name: "AmbienceTests", dependencies: ["Ambience", "AmbienceTool"]),
    ],
    swiftLanguageModes: [.v6]
)
