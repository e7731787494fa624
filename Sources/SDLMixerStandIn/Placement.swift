import Ambience
import CSDLMixerABI

// SDL_mixer's positional effects. On a device of two channels or more they scale and swap the sides, as SDL_mixer's
// do: the channel plays through its stream voice (ChannelStreams.swift), which applies them after its effects. On a
// mono device they map onto the engine's placement of the voice (`ChannelPlacement`): panning and reversed stereo
// are a pan, an angle is a point around the listener, a distance is a gain. Set on a channel, they last until the
// channel's play ends, as SDL_mixer's effects do; set on a channel with no play, they apply to the next one. Each
// returns 1, or 0 with the reason. MIX_CHANNEL_POST (the whole mix) is refused: the final mix can be changed
// (PostProcessing.swift), but these are not written as post effects yet.

/// Changes a channel's placement and moves its voice at once.
private func place(_ function: String, _ channel: Int32, _ change: (inout ChannelPlacement) -> Void) -> Int32 {
    StandIn.shared.state.withLock { state in
        if channel == STANDIN_MIX_CHANNEL_POST {
            report("\(function) on MIX_CHANNEL_POST: " + notYetSupported("placement of the whole mix"))
            return 0
        }
        guard let i = state.channels.index(channel) else {
            report("\(function): invalid channel \(channel)")
            return 0
        }
        let before = state.channels.slots[i].placement
        change(&state.channels.slots[i].placement)
        state.channels.slots[i].placement.noteEffectOrder(from: before)
        if let device = state.device { state.channels.applyPlacement(i, device: device) }
        state.wakeUpdates(for: i)
        return 1
    }
}

/// Mix_SetPanning: the left and right loudness, 0...255 each; 255, 255 is no panning.
@_cdecl("Mix_SetPanning")
public func mixSetPanning(_ channel: Int32, _ left: UInt8, _ right: UInt8) -> Int32 {
    place("Mix_SetPanning", channel) {
        $0.left = left
        $0.right = right
        $0.angle = 0
    }
}

/// Mix_SetPosition: an angle (degrees clockwise from straight ahead; any value, taken modulo 360) and a distance
/// (0 near ... 255 far).
@_cdecl("Mix_SetPosition")
public func mixSetPosition(_ channel: Int32, _ angle: Int16, _ distance: UInt8) -> Int32 {
    place("Mix_SetPosition", channel) {
        // The last of Mix_SetPanning and Mix_SetPosition decides the sides, as in SDL_mixer.
        $0.left = 255
        $0.right = 255
        $0.angle = (Int(angle) % 360 + 360) % 360
        $0.distance = distance
    }
}

/// Mix_SetDistance: the distance alone (0 near ... 255 far), keeping the angle.
@_cdecl("Mix_SetDistance")
public func mixSetDistance(_ channel: Int32, _ distance: UInt8) -> Int32 {
    place("Mix_SetDistance", channel) { $0.distance = distance }
}

/// Mix_SetReverseStereo: non-zero swaps left and right, at once (the channel's stream swaps its sides).
@_cdecl("Mix_SetReverseStereo")
public func mixSetReverseStereo(_ channel: Int32, _ flip: Int32) -> Int32 {
    place("Mix_SetReverseStereo", channel) { $0.reversed = flip != 0 }
}
