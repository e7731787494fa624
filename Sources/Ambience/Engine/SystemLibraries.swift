import AmbienceDecoding
import AmbiencePlatform

// The capabilities report's account of the optional libraries. Each is opened by its own wrapper file
// (PulseAudioMonitor, DBusConnection, MediaItemArtwork, ModuleDecoder, MIDIDecoder); this file only asks them how it went.

extension AudioCapabilities {
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
