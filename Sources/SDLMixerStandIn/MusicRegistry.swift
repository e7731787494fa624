import Ambience
import CSDLMixerABI
import Glibc

/// A Mix_Music pointer: the address of a small block the stand-in allocates per load, never read or written through
/// (programs only pass it back), to key the registry. Guarded by the stand-in's lock, as all its state is.
struct MusicPointer: @unchecked Sendable, Hashable {
    let raw: OpaquePointer
}

/// A C pointer kept in the stand-in's state or handed out of it: guarded by its lock, as all its state is, or owned
/// by the program once returned.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
}

/// A loaded music: the engine's music file, its kind, and the C strings its tag getters hand out, which stay valid
/// while the music lives (Mix_FreeMusic frees them). Set once, then only read.
final class MusicRecord: @unchecked Sendable {
    let file: MusicFile
    let type: Mix_MusicType
    /// Mix_GetMusicTitle's answer: the title tag, else the file's name ("" for music from an SDL_RWops).
    let title: UnsafeMutablePointer<CChar>
    let titleTag: UnsafeMutablePointer<CChar>
    let artistTag: UnsafeMutablePointer<CChar>
    let albumTag: UnsafeMutablePointer<CChar>
    /// The engine reads no copyright tag: always "" (SDL_mixer's answer when a file has none).
    let copyrightTag: UnsafeMutablePointer<CChar>

    init(_ file: MusicFile, fileName: String?) {
        self.file = file
        type = MusicRecord.type(of: file.format)
        let tag = file.titleTag.flatMap { $0.isEmpty ? nil : $0 }
        title = strdup(tag ?? fileName ?? "")!
        titleTag = strdup(file.titleTag ?? "")!
        artistTag = strdup(file.item.artist ?? "")!
        albumTag = strdup(file.item.albumTitle ?? "")!
        copyrightTag = strdup("")!
    }

    /// Frees the C strings (Mix_FreeMusic, once the music is out of the registry).
    func freeStrings() {
        for text in [title, titleTag, artistTag, albumTag, copyrightTag] { free(text) }
    }

    /// SDL_mixer's kind for the engine's format. MP4 (AAC, ALAC) has no kind of its own in SDL_mixer: MUS_NONE.
    static func type(of format: MusicFile.Format) -> Mix_MusicType {
        switch format {
        case .wav: MUS_WAV
        case .ogg: MUS_OGG
        case .mp3: MUS_MP3
        case .flac: MUS_FLAC
        case .opus: MUS_OPUS
        case .module: MUS_MOD
        case .midi: MUS_MID
        case .mp4: MUS_NONE
        }
    }
}

/// Every Mix_Music the stand-in handed out and has not freed, and those it freed (refused afterwards, never read).
struct MusicRegistry {
    private var live: [MusicPointer: MusicRecord] = [:]
    private var freed: Set<MusicPointer> = []
    /// Freed addresses remembered at most; past this they are forgotten and counting starts again (a program that
    /// frees a million musics and then passes an early one back is not caught). A program never builds a Mix_Music
    /// of its own (the type is opaque), so unlike a chunk's no program struct can be at a refused address.
    static let freedMemory = 1 << 20

    /// Registers a new music under a fresh pointer.
    mutating func add(_ record: MusicRecord) -> MusicPointer {
        let pointer = MusicPointer(raw: OpaquePointer(UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)))
        freed.remove(pointer)  // malloc may hand out a freed address again: it is live now
        live[pointer] = record
        return pointer
    }

    /// The record for a pointer a program passed, or why it is refused.
    func record(_ pointer: MusicPointer?) -> Result<MusicRecord, MusicLookupError> {
        guard let pointer else { return .failure(.null) }
        if let record = live[pointer] { return .success(record) }
        return .failure(freed.contains(pointer) ? .freed : .unknown)
    }

    /// Forgets a music and frees its block; its C strings are the caller's to free, outside the lock's users' reach.
    mutating func remove(_ pointer: MusicPointer) -> MusicRecord? {
        guard let record = live.removeValue(forKey: pointer) else { return nil }
        if freed.count >= Self.freedMemory { freed.removeAll() }
        freed.insert(pointer)
        UnsafeMutableRawPointer(pointer.raw).deallocate()
        return record
    }
}

/// Why a Mix_Music pointer is refused.
enum MusicLookupError: Error {
    case null
    case freed
    case unknown

    var description: String {
        switch self {
        case .null: "music parameter was NULL"
        case .freed: "the music was freed (Mix_FreeMusic)"
        case .unknown: "not a music this library loaded"
        }
    }
}

/// What the music is doing about fading, and until when (monotonic nanoseconds).
enum MusicFade: Equatable {
    case none
    case fadingIn(until: Int)
    case fadingOut(until: Int)

    var status: Mix_Fading {
        switch self {
        case .none: MIX_NO_FADING
        case .fadingIn: MIX_FADING_IN
        case .fadingOut: MIX_FADING_OUT
        }
    }
}

/// The music side of the stand-in's state: what is playing (on the engine's music player), the settings, the hooks.
struct MusicState {
    var registry = MusicRegistry()
    /// The music playing or paused (Mix_PlayingMusic), nil once halted or ended.
    var current: MusicPointer?
    /// Play-throughs asked for (nil: forever); the player's queue holds `queued` copies of the item, topped up by
    /// the update thread as they play.
    var passes: Int?
    var queued = 0
    /// Paused by Mix_PauseMusic.
    var paused = false
    var fade = MusicFade.none
    /// Mix_VolumeMusic, 0...128: the music player's own volume.
    var volume = Int(STANDIN_MIX_MAX_VOLUME)
    /// Mix_HookMusicFinished's callback.
    var finished: standin_music_finished?
    /// Mix_HookMusic's function is set: SDL_mixer then mixes it in the music's place, and the music waits where it
    /// is (MusicHold.swift).
    var hooked = false
    /// The fade the music was in when it was held, to go on with when it is let go.
    var heldFade: HeldFade?
    /// Mix_SetSoundFonts' list (nil: none set), and the C string Mix_GetSoundFonts last handed out.
    var soundFonts: String?
    var soundFontsText: Unchecked<UnsafeMutablePointer<CChar>?> = Unchecked(value: nil)
    /// Mix_SetTimidityCfg's path, as a C string Mix_GetTimidityCfg hands out.
    var timidityConfig: Unchecked<UnsafeMutablePointer<CChar>?> = Unchecked(value: nil)
}
