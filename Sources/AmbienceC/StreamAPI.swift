// ambience.h: stream voices and the post-mix observer.

import Ambience
import CAmbience

@_cdecl("ambience_play_stream")
public func ambience_play_stream(
    _ engine: OpaquePointer?, _ sampleRate: Int32, _ channels: Int32,
    _ options: UnsafePointer<ambience_play_options>?, _ callback: ambience_stream_callback?,
    _ userdata: UnsafeMutableRawPointer?, _ outVoice: UnsafeMutablePointer<UInt64>?
) -> ambience_status {
    api("ambience_play_stream") {
        let box = try engineBox(engine)
        guard let callback else { throw APIError.invalid("callback is NULL") }
        let settings = try playOptions(options?.pointee ?? defaultPlayOptions(), engine: box)
        let target = Callback(function: callback, userdata: userdata)
        let voice = try box.engine.playStream(sampleRate: Int(sampleRate), channels: Int(channels), settings) {
            samples in
            let frames = samples.count / Int(channels)
            // The C callback's count is a claim: what it says beyond what was asked is cut to it.
            return min(target.function(target.userdata, samples.baseAddress, frames), frames)
        }
        outVoice?.pointee = register(voice, owner: box, placement: settings.placement)
    }
}

@_cdecl("ambience_engine_set_post_mix")
public func ambience_engine_set_post_mix(
    _ engine: OpaquePointer?, _ callback: ambience_post_mix_callback?, _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    api("ambience_engine_set_post_mix") {
        let box = try engineBox(engine)
        guard let callback else { return box.engine.setPostMix(nil) }
        let target = Callback(function: callback, userdata: userdata)
        box.engine.setPostMix { samples, frames in target.function(target.userdata, samples.baseAddress, frames) }
    }
}
