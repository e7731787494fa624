import CSDLMixerABI

// Code that sees or makes samples: Mix_RegisterEffect (one channel's samples before mixing), Mix_SetPostMix (the
// final mix) and the rest. They need the engine's post-mix observer and per-voice processing, another change's work;
// until then each fails SDL_mixer's documented way (0, or nothing set), with the reason in Mix_GetError.

/// Mix_RegisterEffect: 0 (error) for now.
@_cdecl("Mix_RegisterEffect")
public func mixRegisterEffect(
    _ channel: Int32, _ effect: Mix_EffectFunc_t?, _ done: Mix_EffectDone_t?, _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    report(notYetSupported("Mix_RegisterEffect"))
    return 0
}

/// Mix_UnregisterEffect: 0 (error): no effect can have been registered.
@_cdecl("Mix_UnregisterEffect")
public func mixUnregisterEffect(_ channel: Int32, _ effect: Mix_EffectFunc_t?) -> Int32 {
    report("Mix_UnregisterEffect: no such effect registered")
    return 0
}

/// Mix_UnregisterAllEffects: ends the channel's placement (SDL_mixer's positional effects are effects too); 1, or 0
/// for a channel that does not exist.
@_cdecl("Mix_UnregisterAllEffects")
public func mixUnregisterAllEffects(_ channel: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        guard let i = state.channels.index(channel) else {
            report("Mix_UnregisterAllEffects: invalid channel \(channel)")
            return 0
        }
        state.channels.slots[i].placement = ChannelPlacement()
        if let device = state.device { state.channels.applyPlacement(i, device: device, chunks: &state.chunks) }
        return 1
    }
}

/// Mix_SetPostMix: refused for now; a NULL function (removing a post-mix) is what is already the case.
@_cdecl("Mix_SetPostMix")
public func mixSetPostMix(_ function: standin_mix_func?, _ argument: UnsafeMutableRawPointer?) {
    if function != nil { report(notYetSupported("Mix_SetPostMix")) }
}
