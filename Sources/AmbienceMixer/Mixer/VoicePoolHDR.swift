/// The voice pool's part of HDR mixing (docs/HDR.md): a voice's level under its bus's window, the ranking of voices
/// under a window, and the loudest level under each window. Pure, as the rest of the pool.
extension VoicePool {
    /// The score of a voice culled by its window: under every voice that can be heard (priority counts for
    /// nothing below the window), above a paused one (-1). A culled voice is the first made virtual or stolen,
    /// and never takes a source while culled.
    static let culled: Float = -0.5
    /// 10^(1/20): a voice without a source must be 1 dB above the bottom to be heard, so that one hovering at the
    /// bottom is not culled and given back at every rank (docs/HDR.md, "Culling").
    static let cullHysteresis: Float = 1.122_018_5

    /// How loud a voice is before its buses, linear: its gain × fade × distance attenuation.
    static func heard(_ slot: UnsafePointer<VoiceSlot>, _ listener: ListenerState) -> Float {
        slot.pointee.gain * slot.pointee.fadeGain * attenuation(of: slot, listener)
    }

    /// The importance of an unpaused voice under the HDR window of bus `window`: culled when its level is below
    /// the window's bottom (1 dB above it for a voice without a source: culled, or not yet heard), else priority,
    /// then its gain under the window and its buses.
    static func hdrImportance(
        of slot: UnsafePointer<VoiceSlot>, window: Int, _ audibility: Audibility, attenuation: Float
    ) -> Float {
        let heard = slot.pointee.gain * slot.pointee.fadeGain * attenuation
        let level = heard * slot.pointee.loudnessGain
        let floor = audibility.hdrFloor[window] * (slot.pointee.source >= 0 ? 1 : cullHysteresis)
        if level < floor { return culled }
        let audible = min(level * audibility.hdrScale[window], 1) * audibility.busGains[slot.pointee.bus]
        return Float(slot.pointee.priority) * 16 + min(audible, 15)
    }

    /// The loudest linear level of the unpaused voices under each window, by the window's bus (0 where none plays):
    /// what the windows follow. Visits every live voice; the mixer calls it every block only while the pool is
    /// small, else every 40 ms with the rank. `peaks` has one entry per bus and is reused: no allocation.
    func loudestLevels(into peaks: inout [Float], _ audibility: Audibility) {
        for i in peaks.indices { peaks[i] = 0 }
        guard !audibility.hdrOwner.isEmpty else { return }
        slots.withUnsafeBufferPointer { pool in
            for slot in active {
                let s = pool.baseAddress! + Int(slot)
                let window = audibility.hdrOwner[s.pointee.bus]
                guard window >= 0, !s.pointee.paused else { continue }
                peaks[window] = max(peaks[window], VoicePool.heard(s, audibility.listener) * s.pointee.loudnessGain)
            }
        }
    }

    /// Whether a live voice is culled by its window now.
    func isCulled(_ slot: Int32, _ audibility: Audibility) -> Bool {
        importance(ofSlot: slot, audibility) == VoicePool.culled
    }
}
