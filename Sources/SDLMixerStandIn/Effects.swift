import Ambience
import AmbiencePlatform
import CSDLMixerABI

// Mix_RegisterEffect and its kin: the program's functions run on one channel's samples before they are mixed, in the
// opened format, in the order they were registered, each on what the one before left. A channel with effects plays
// through a stream voice (ChannelStreams.swift); a play already under way moves to one where it is. MIX_CHANNEL_POST
// names the final mix (PostProcessing.swift).
//
// Locks: each channel's effects are under a lock of their own (`EffectChain`), held while they run on the stream
// thread. An effect may call the library (it then takes the stand-in's lock), so the stand-in's lock is never held
// while a chain's is taken: registering, unregistering and the end of a play look the chain up under the stand-in's
// lock and change it after. Done callbacks run with no lock of ours held, once the effect can no longer be running.

/// One registration: the program's function, its done callback and their argument.
struct RegisteredEffect: @unchecked Sendable {
    let function: Mix_EffectFunc_t
    let done: Mix_EffectDone_t?
    let argument: UnsafeMutableRawPointer?

    func isFunction(_ other: Mix_EffectFunc_t) -> Bool {
        unsafeBitCast(function, to: UnsafeRawPointer.self) == unsafeBitCast(other, to: UnsafeRawPointer.self)
    }
}

/// A channel's effects, in registration order. Closed when the play it belonged to ends (the channel gets a new,
/// empty chain): from then on nothing runs and nothing is added.
final class EffectChain: Sendable {
    private struct Contents {
        var effects: [RegisteredEffect] = []
        var closed = false
    }
    private let contents = Lock<Contents>(Contents())

    /// Appends an effect; false when the chain is closed (the caller takes the channel's current chain).
    func add(_ effect: RegisteredEffect) -> Bool {
        contents.withLock { chain in
            guard !chain.closed else { return false }
            chain.effects.append(effect)
            return true
        }
    }

    /// Removes the first registration of `function`; nil when there is none. Once it returns the effect is not
    /// running (a run holds the lock).
    func remove(_ function: Mix_EffectFunc_t) -> RegisteredEffect? {
        contents.withLock { chain in
            guard let at = chain.effects.firstIndex(where: { $0.isFunction(function) }) else { return nil }
            return chain.effects.remove(at: at)
        }
    }

    /// Removes every effect (the chain stays open); returns them, for their done callbacks.
    func removeAll() -> [RegisteredEffect] {
        contents.withLock { chain in
            defer { chain.effects.removeAll() }
            return chain.effects
        }
    }

    /// Closes the chain; returns its effects, for their done callbacks.
    func close() -> [RegisteredEffect] {
        contents.withLock { chain in
            chain.closed = true
            defer { chain.effects.removeAll() }
            return chain.effects
        }
    }

    /// Runs every effect on `length` bytes at `block`, in order; false when the chain is closed.
    func run(channel: Int32, _ block: UnsafeMutableRawPointer, length: Int) -> Bool {
        contents.withLock { chain in
            guard !chain.closed else { return false }
            for effect in chain.effects {
                effect.function(channel, block, Int32(clamping: length), effect.argument)
            }
            return true
        }
    }
}

/// Calls each effect's done callback, with no lock of ours held.
func callDone(_ effects: [RegisteredEffect], channel: Int32) {
    for effect in effects { effect.done?(channel, effect.argument) }
}

/// Mix_RegisterEffect: adds `effect` to the channel's effects (or, for MIX_CHANNEL_POST, to the final mix's); a
/// play under way on the channel goes on through a stream voice. Non-zero when added; 0 for a NULL function or a
/// channel that does not exist, with the reason.
@_cdecl("Mix_RegisterEffect")
public func mixRegisterEffect(
    _ channel: Int32, _ effect: Mix_EffectFunc_t?, _ done: Mix_EffectDone_t?, _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let effect else {
        report("Mix_RegisterEffect: NULL effect function")
        return 0
    }
    let registration = RegisteredEffect(function: effect, done: done, argument: argument)
    if channel == STANDIN_MIX_CHANNEL_POST { return addPostEffect(registration) }
    // A chain closed in between (the play ended) is replaced at once: the effect goes in the channel's new one.
    for _ in 0..<16 {
        guard let chain = channelChain(channel, "Mix_RegisterEffect") else { return 0 }
        guard chain.add(registration) else { continue }
        StandIn.shared.state.withLock { state in
            guard let i = state.channels.index(channel), state.channels.slots[i].effects === chain else { return }
            state.channels.slots[i].effectCount += 1
            if let device = state.device { state.channels.moveToStream(i, device: device) }
            state.wakeUpdates(for: i)
        }
        return 1
    }
    report("Mix_RegisterEffect: channel \(channel)'s plays kept ending while the effect was being added")
    return 0
}

/// The channel's current chain, or nil (with the reason) for a channel that does not exist.
private func channelChain(_ channel: Int32, _ function: String) -> EffectChain? {
    StandIn.shared.state.withLock { state in
        guard let i = state.channels.index(channel) else {
            report("\(function): invalid channel number \(channel)")
            return nil
        }
        return state.channels.chain(i)
    }
}

/// Mix_UnregisterEffect: removes the first registration of `effect` from the channel (MIX_CHANNEL_POST: the final
/// mix) and calls its done callback before it returns. Non-zero when removed; 0 when the channel does not exist or
/// has no such effect, with the reason.
@_cdecl("Mix_UnregisterEffect")
public func mixUnregisterEffect(_ channel: Int32, _ effect: Mix_EffectFunc_t?) -> Int32 {
    if channel == STANDIN_MIX_CHANNEL_POST { return removePostEffect(effect) }
    guard let chain = channelChain(channel, "Mix_UnregisterEffect") else { return 0 }
    guard let effect, let removed = chain.remove(effect) else {
        report("Mix_UnregisterEffect: no such effect registered on channel \(channel)")
        return 0
    }
    StandIn.shared.state.withLock { state in
        guard let i = state.channels.index(channel), state.channels.slots[i].effects === chain else { return }
        state.channels.slots[i].effectCount = max(state.channels.slots[i].effectCount - 1, 0)
    }
    callDone([removed], channel: channel)
    return 1
}

/// Mix_UnregisterAllEffects: removes every effect of the channel (done callbacks before it returns) and ends its
/// placement (SDL_mixer's positional effects are effects too). MIX_CHANNEL_POST: every effect on the final mix.
/// 1, or 0 for a channel that does not exist.
@_cdecl("Mix_UnregisterAllEffects")
public func mixUnregisterAllEffects(_ channel: Int32) -> Int32 {
    if channel == STANDIN_MIX_CHANNEL_POST { return removeAllPostEffects() }
    let found = StandIn.shared.state.withLock { state -> (chain: EffectChain?, exists: Bool) in
        guard let i = state.channels.index(channel) else {
            report("Mix_UnregisterAllEffects: invalid channel number \(channel)")
            return (nil, false)
        }
        state.channels.slots[i].placement = ChannelPlacement()
        state.channels.slots[i].effectCount = 0
        if let device = state.device { state.channels.applyPlacement(i, device: device) }
        state.wakeUpdates(for: i)
        return (state.channels.slots[i].effects, true)
    }
    guard found.exists else { return 0 }
    callDone(found.chain?.removeAll() ?? [], channel: channel)
    return 1
}
