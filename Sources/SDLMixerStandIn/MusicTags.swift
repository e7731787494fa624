import CSDLMixerABI

// Music's kind and tags. Each getter takes a music, or NULL for the music playing; the strings it returns belong to
// the music and stay valid until Mix_FreeMusic. Absent tags, no music and freed music give "" (SDL_mixer's getters
// never return NULL).

/// The empty string the tag getters return when there is nothing to say; static, never freed.
private let emptyText: StaticString = ""

private func noTag() -> UnsafePointer<CChar> {
    UnsafeRawPointer(emptyText.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// The tags a getter asks for.
private enum TagField {
    case title, titleTag, artist, album, copyright

    func text(of record: MusicRecord) -> UnsafeMutablePointer<CChar> {
        switch self {
        case .title: record.title
        case .titleTag: record.titleTag
        case .artist: record.artistTag
        case .album: record.albumTag
        case .copyright: record.copyrightTag
        }
    }
}

/// The text `field` of the music a getter names, or "" (the reason set when the music was freed or none plays).
private func tag(_ music: OpaquePointer?, _ function: String, _ field: TagField) -> UnsafePointer<CChar> {
    let named = music.map(MusicPointer.init)
    let text = StandIn.shared.state.withLock { state in
        state.music.resolve(named, function).map { Unchecked(value: field.text(of: $0.record)) }
    }
    return text.map { UnsafePointer($0.value) } ?? noTag()
}

/// Mix_GetMusicType: the music's kind, read from its bytes (MUS_WAV, MUS_OGG, MUS_MP3, MUS_FLAC, MUS_OPUS, MUS_MOD,
/// MUS_MID; MP4 has none in SDL_mixer: MUS_NONE); NULL asks for the music playing. MUS_NONE when there is none.
@_cdecl("Mix_GetMusicType")
public func mixGetMusicType(_ music: OpaquePointer?) -> Mix_MusicType {
    let named = music.map(MusicPointer.init)
    return StandIn.shared.state.withLock { state in
        state.music.resolve(named, "Mix_GetMusicType")?.record.type ?? MUS_NONE
    }
}

/// Mix_GetMusicTitle: the title tag, else the file's name (without its folder; "" for music from an SDL_RWops).
@_cdecl("Mix_GetMusicTitle")
public func mixGetMusicTitle(_ music: OpaquePointer?) -> UnsafePointer<CChar>? {
    tag(music, "Mix_GetMusicTitle", .title)
}

@_cdecl("Mix_GetMusicTitleTag")
public func mixGetMusicTitleTag(_ music: OpaquePointer?) -> UnsafePointer<CChar>? {
    tag(music, "Mix_GetMusicTitleTag", .titleTag)
}

@_cdecl("Mix_GetMusicArtistTag")
public func mixGetMusicArtistTag(_ music: OpaquePointer?) -> UnsafePointer<CChar>? {
    tag(music, "Mix_GetMusicArtistTag", .artist)
}

@_cdecl("Mix_GetMusicAlbumTag")
public func mixGetMusicAlbumTag(_ music: OpaquePointer?) -> UnsafePointer<CChar>? {
    tag(music, "Mix_GetMusicAlbumTag", .album)
}

/// Mix_GetMusicCopyrightTag: "" always: the engine reads no copyright tag.
@_cdecl("Mix_GetMusicCopyrightTag")
public func mixGetMusicCopyrightTag(_ music: OpaquePointer?) -> UnsafePointer<CChar>? {
    tag(music, "Mix_GetMusicCopyrightTag", .copyright)
}
