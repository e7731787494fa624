// ambience.h: HDR mixing, a bus's window and a sound's loudness (docs/HDR.md).

import Ambience
import CAmbience

@_cdecl("ambience_bus_set_hdr")
public func ambience_bus_set_hdr(
    _ bus: OpaquePointer?, _ width: Float, _ threshold: Float, _ attack: Double, _ release: Double
) -> ambience_status {
    api("ambience_bus_set_hdr") {
        let box = try busBox(bus)
        try checked { () throws(InvalidNumber) in
            try box.bus.setHDR(HDRSettings(width: width, threshold: threshold, attack: attack, release: release))
        }
    }
}

@_cdecl("ambience_bus_clear_hdr")
public func ambience_bus_clear_hdr(_ bus: OpaquePointer?) -> ambience_status {
    api("ambience_bus_clear_hdr") {
        let box = try busBox(bus)
        try checked { () throws(InvalidNumber) in try box.bus.setHDR(nil) }
    }
}

@_cdecl("ambience_bus_get_hdr_top")
public func ambience_bus_get_hdr_top(
    _ bus: OpaquePointer?, _ outHasWindow: UnsafeMutablePointer<Bool>?, _ outTop: UnsafeMutablePointer<Float>?
) -> ambience_status {
    api("ambience_bus_get_hdr_top") {
        let top = try busBox(bus).bus.hdrWindowTop
        outHasWindow?.pointee = top != nil
        outTop?.pointee = top ?? 0
    }
}

@_cdecl("ambience_sound_set_loudness")
public func ambience_sound_set_loudness(_ sound: OpaquePointer?, _ loudness: Float) -> ambience_status {
    api("ambience_sound_set_loudness") {
        let box = try soundBox(sound)
        try checked { () throws(InvalidNumber) in try box.sound.setLoudness(loudness) }
    }
}

@_cdecl("ambience_sound_get_loudness")
public func ambience_sound_get_loudness(_ sound: OpaquePointer?, _ out: UnsafeMutablePointer<Float>?)
    -> ambience_status
{
    api("ambience_sound_get_loudness") {
        let box = try soundBox(sound)
        try output(out, "out_loudness_db").pointee = box.sound.loudness
    }
}

@_cdecl("ambience_play_with_loudness")
public func ambience_play_with_loudness(
    _ sound: OpaquePointer?, _ options: UnsafePointer<ambience_play_options>?, _ loudness: Float,
    _ outVoice: UnsafeMutablePointer<UInt64>?
) -> ambience_status {
    api("ambience_play_with_loudness") {
        // A refused call leaves no stale id behind: a caller that ignores the status stops nothing by mistake.
        outVoice?.pointee = 0
        try startVoice(sound, options, loudness: loudness, outVoice)
    }
}
