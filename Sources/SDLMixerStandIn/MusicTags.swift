import CSDLMixerABI

// Music tags and type. No music can be loaded yet (Music.swift), so each answers as SDL_mixer does for no music:
// MUS_NONE, and "" for every tag (SDL_mixer's getters return an empty string, never NULL).

/// The empty string the tag getters return; static, never freed.
private let emptyText: StaticString = ""

private func noTag() -> UnsafePointer<CChar> {
    UnsafeRawPointer(emptyText.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("Mix_GetMusicType")
public func mixGetMusicType(_ music: OpaquePointer?) -> Mix_MusicType { MUS_NONE }

@_cdecl("Mix_GetMusicTitle")
public func mixGetMusicTitle(_ music: OpaquePointer?) -> UnsafePointer<CChar>? { noTag() }

@_cdecl("Mix_GetMusicTitleTag")
public func mixGetMusicTitleTag(_ music: OpaquePointer?) -> UnsafePointer<CChar>? { noTag() }

@_cdecl("Mix_GetMusicArtistTag")
public func mixGetMusicArtistTag(_ music: OpaquePointer?) -> UnsafePointer<CChar>? { noTag() }

@_cdecl("Mix_GetMusicAlbumTag")
public func mixGetMusicAlbumTag(_ music: OpaquePointer?) -> UnsafePointer<CChar>? { noTag() }

@_cdecl("Mix_GetMusicCopyrightTag")
public func mixGetMusicCopyrightTag(_ music: OpaquePointer?) -> UnsafePointer<CChar>? { noTag() }
