// swift-tools-version:6.0
// A game that only mixes, as a package of its own: it depends on Ambience's `AmbienceMixer` product alone, so it
// compiles and links none of the engine's other libraries (MixerOnlyConsumerTests reads what its binary links).
import PackageDescription

let package = Package(
    name: "MixerOnly",
    dependencies: [.package(name: "Ambience", path: "../../..")],
    targets: [
        .executableTarget(name: "MixerOnly", dependencies: [.product(name: "AmbienceMixer", package: "Ambience")])
    ],
    swiftLanguageModes: [.v6]
)
