import Ambience
import CSDLMixerABI
import Glibc

// The channel table's size, reserved channels, and groups (tags).

/// Mix_AllocateChannels: grows or shrinks the table to `count` channels and returns the new count; a negative
/// count only asks. Channels dropped by shrinking are halted first (their callbacks run before it returns). Over
/// `ChannelTable.maximumCount` it fails with -1.
///
/// The dropped channels' callbacks run while those channels still exist, so a callback's Mix_GetChunk is the chunk
/// that ended (SDL_mixer halts them before it reallocates). An end the update thread found there and has not begun
/// to report is reported here instead, with the halts; one it is reporting now is not waited for (its callback may
/// wait on a lock the caller holds), and still sees its chunk (`MixerState.reportingNow`). A callback that plays
/// there again is ended in the next pass; after a few passes the channels go with what plays on them.
@_cdecl("Mix_AllocateChannels")
public func mixAllocateChannels(_ count: Int32) -> Int32 {
    for pass in 0... {
        var finished: [Int32] = []
        let result = StandIn.shared.state.withLock { state -> Int32? in
            guard count >= 0 else { return Int32(clamping: state.channels.count) }
            guard Int(count) <= ChannelTable.maximumCount else {
                return refuse(
                    "Channel allocation failed: \(count) channels, over the \(ChannelTable.maximumCount) allowed")
            }
            let wanted = Int(count)
            if wanted < state.channels.count {
                let dropped = wanted..<state.channels.count
                for i in dropped {
                    let channel = Int32(clamping: i)
                    if state.takeSettledEnd(channel) {
                        finished.append(channel)
                    } else if state.reporting.contains(channel) && state.reportingNow?.channel != channel {
                        state.reporting.remove(channel)
                        finished.append(channel)
                    } else if state.channels.end(i) {
                        finished.append(channel)
                    }
                }
                if !finished.isEmpty, pass < 8 { return nil }
                // A dropped channel's effects go with it (their done callbacks run below, with the finished ones).
                for i in dropped where state.channels.slots[i].effectCount > 0 { state.channels.closeEffects(i) }
                state.channels.slots.removeSubrange(dropped)
            } else {
                state.channels.slots += Array(repeating: ChannelSlot(), count: wanted - state.channels.count)
            }
            state.channels.reserved = min(state.channels.reserved, wanted)
            return count
        }
        deliverFinished(finished)
        if let result { return result }
    }
    return -1
}

/// Mix_ReserveChannels: keeps the first `count` channels (at most all of them) out of reach of channel -1; returns
/// `count` capped at the channel count, as SDL_mixer does (a negative count reserves none and is returned as is).
@_cdecl("Mix_ReserveChannels")
public func mixReserveChannels(_ count: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        let capped = min(Int(count), state.channels.count)
        state.channels.reserved = max(capped, 0)
        return Int32(clamping: capped)
    }
}

/// Mix_GroupChannel: puts the channel in group `tag` (-1: in none). 1 when done, 0 for a channel that does not
/// exist.
@_cdecl("Mix_GroupChannel")
public func mixGroupChannel(_ channel: Int32, _ tag: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        guard let i = state.channels.index(channel) else {
            report("Mix_GroupChannel: invalid channel \(channel)")
            return 0
        }
        state.channels.slots[i].tag = tag
        return 1
    }
}

/// Mix_GroupChannels: puts the channels of `from` through `to` that exist in group `tag`; returns how many (0 when
/// the range names none). SDL_mixer groups channel by channel the same way, and counts one past its table too:
/// that one is not written here.
@_cdecl("Mix_GroupChannels")
public func mixGroupChannels(_ from: Int32, _ to: Int32, _ tag: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        let first = max(Int(from), 0), last = min(Int(to), state.channels.count - 1)
        guard first <= last else {
            report("Mix_GroupChannels: no channel in \(from)...\(to)")
            return 0
        }
        for i in first...last { state.channels.slots[i].tag = tag }
        return Int32(last - first + 1)
    }
}

/// The channels in group `tag` (-1: every channel).
private func members(_ tag: Int32, _ table: ChannelTable) -> [Int] {
    table.slots.indices.filter { tag == -1 || table.slots[$0].tag == tag }
}

/// Mix_GroupAvailable: the first channel of the group with no play on it, or -1.
@_cdecl("Mix_GroupAvailable")
public func mixGroupAvailable(_ tag: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        state.settle(-1)
        return members(tag, state.channels).first { !state.channels.isPlaying($0) }.map(Int32.init) ?? -1
    }
}

/// Mix_GroupCount: how many channels are in the group (-1: how many channels there are).
@_cdecl("Mix_GroupCount")
public func mixGroupCount(_ tag: Int32) -> Int32 {
    StandIn.shared.state.withLock { Int32(members(tag, $0.channels).count) }
}

/// Mix_GroupOldest: the group's channel whose play started first, or -1 when none of them plays.
@_cdecl("Mix_GroupOldest")
public func mixGroupOldest(_ tag: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        state.settle(-1)
        return members(tag, state.channels).filter { state.channels.isPlaying($0) }
            .min { state.channels.slots[$0].startedAt < state.channels.slots[$1].startedAt }.map(Int32.init) ?? -1
    }
}

/// Mix_GroupNewer: the group's channel whose play started last, or -1 when none of them plays.
@_cdecl("Mix_GroupNewer")
public func mixGroupNewer(_ tag: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        state.settle(-1)
        return members(tag, state.channels).filter { state.channels.isPlaying($0) }
            .max { state.channels.slots[$0].startedAt < state.channels.slots[$1].startedAt }.map(Int32.init) ?? -1
    }
}

/// Mix_FadeOutGroup: fades out every playing channel of the group; returns how many started fading.
@_cdecl("Mix_FadeOutGroup")
public func mixFadeOutGroup(_ tag: Int32, _ ms: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in fadeOut(members(tag, state.channels), ms: ms, in: &state) }
}

/// Mix_HaltGroup: halts every channel of the group (callbacks before it returns); 0.
@_cdecl("Mix_HaltGroup")
public func mixHaltGroup(_ tag: Int32) -> Int32 {
    let finished = StandIn.shared.state.withLock { state in
        members(tag, state.channels).filter { state.channels.end($0) }.map(Int32.init)
    }
    deliverFinished(finished)
    return 0
}
