// The capabilities report's account of the optional libraries. Each is opened by its own wrapper file
// (PulseAudioMonitor, DBusConnection, MediaItemArtwork, ModuleDecoder, MIDIDecoder); this file only asks them how it went.

extension AudioCapabilities {
    /// A system library the engine opens at run time rather than links, so that a game starts without it.
    public struct SystemLibrary: Sendable, Equatable {
        /// The name it is opened by (its soname, such as `libpulse.so.0`).
        public var name: String
        /// What the engine does with it, and so does without when it is missing.
        public var feature: String
        /// Why it could not be used (the dynamic loader's message, or the function it lacks); nil when it loaded.
        public var unavailableReason: String?

        /// True when the library loaded with every function the engine calls.
        public var isAvailable: Bool { unavailableReason == nil }
    }

    /// libpulse, libdbus-1, SDL2_image, libopenmpt and libfluidsynth, each opened now if nothing needed it yet.
    static var systemLibraryReport: [SystemLibrary] {
        func report<Table>(_ library: OptionalLibrary<Table>) -> SystemLibrary {
            SystemLibrary(name: library.name, feature: library.feature, unavailableReason: library.failure?.description)
        }
        return [
            report(PulseAudioMonitor.library), report(DBusConnection.library), report(MediaItemArtwork.library),
            report(ModuleDecoder.library), report(MIDIDecoder.library)
        ]
    }

    /// These capabilities with the optional libraries added, and each one missing listed with its reason.
    func withSystemLibraries() -> AudioCapabilities {
        var capabilities = self
        capabilities.systemLibraries = Self.systemLibraryReport
        for library in capabilities.systemLibraries {
            if let reason = library.unavailableReason { capabilities.missing.append("\(library.feature): \(reason)") }
        }
        return capabilities
    }
}

extension AudioEngine {
    /// The optional system libraries (libpulse, libdbus-1, SDL2_image, libopenmpt, libfluidsynth), each opened now if
    /// nothing needed it yet: what `capabilities.systemLibraries` reports, without an engine. For a program that
    /// asks what it can decode before it opens one (SDL_mixer's `Mix_Init` does).
    public static var systemLibraries: [AudioCapabilities.SystemLibrary] { AudioCapabilities.systemLibraryReport }
}
