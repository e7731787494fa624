// ambience.h: buses, ducking and reverb.

import Ambience
import CAmbience

@_cdecl("ambience_bus_get")
public func ambience_bus_get(
    _ engine: OpaquePointer?, _ which: ambience_builtin_bus,
    _ outBus: UnsafeMutablePointer<OpaquePointer?>?
) -> ambience_status {
    api("ambience_bus_get") {
        let box = try engineBox(engine)
        let out = try output(outBus, "out_bus")
        let index: Int
        switch which {
        case AMBIENCE_BUS_MASTER: index = 0
        case AMBIENCE_BUS_MUSIC: index = 1
        case AMBIENCE_BUS_SFX: index = 2
        case AMBIENCE_BUS_UI: index = 3
        case AMBIENCE_BUS_DIALOGUE: index = 4
        default: throw APIError.invalid("which is \(which.rawValue), not an ambience_builtin_bus")
        }
        out.pointee = OpaquePointer(bitPattern: box.builtinBuses[index])
    }
}

@_cdecl("ambience_bus_create")
public func ambience_bus_create(
    _ engine: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ parent: OpaquePointer?,
    _ outBus: UnsafeMutablePointer<OpaquePointer?>?
) -> ambience_status {
    api("ambience_bus_create") {
        let box = try engineBox(engine)
        let name = try string(name, "name")
        let out = try output(outBus, "out_bus")
        var parentBus: Bus? = nil
        if let parent {
            let parentBox = try busBox(parent, "parent")
            guard parentBox.owner === box else {
                throw APIError(AMBIENCE_ERROR_WRONG_ENGINE, "parent belongs to another engine")
            }
            parentBus = parentBox.bus
        }
        let bus = box.engine.makeBus(named: name, parent: parentBus)
        let handle = registry.withLock { state -> UInt in
            let handle = HandleKind.bus.handle(serial: state.serial())
            if state.engines[box.handle] != nil { state.buses[handle] = BusBox(handle: handle, owner: box, bus: bus) }
            return handle
        }
        out.pointee = OpaquePointer(bitPattern: handle)
    }
}

@_cdecl("ambience_bus_get_name")
public func ambience_bus_get_name(
    _ bus: OpaquePointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int,
    _ required: UnsafeMutablePointer<Int>?
) -> ambience_status {
    api("ambience_bus_get_name") { try copyOut(try busBox(bus).bus.name, buffer, size, required) }
}

@_cdecl("ambience_bus_set_gain")
public func ambience_bus_set_gain(_ bus: OpaquePointer?, _ gain: Float) -> ambience_status {
    api("ambience_bus_set_gain") {
        let box = try busBox(bus)
        try checked { () throws(InvalidNumber) in try box.bus.setGain(gain) }
    }
}

@_cdecl("ambience_bus_get_gain")
public func ambience_bus_get_gain(_ bus: OpaquePointer?, _ out: UnsafeMutablePointer<Float>?) -> ambience_status {
    api("ambience_bus_get_gain") {
        let box = try busBox(bus)
        try output(out, "out_gain").pointee = box.bus.gain
    }
}

@_cdecl("ambience_bus_fade")
public func ambience_bus_fade(_ bus: OpaquePointer?, _ gain: Float, _ seconds: Double) -> ambience_status {
    api("ambience_bus_fade") {
        let box = try busBox(bus)
        try checked { () throws(InvalidNumber) in try box.bus.fade(to: gain, over: seconds) }
    }
}

@_cdecl("ambience_bus_set_muted")
public func ambience_bus_set_muted(_ bus: OpaquePointer?, _ muted: Bool) -> ambience_status {
    api("ambience_bus_set_muted") { try busBox(bus).bus.isMuted = muted }
}

@_cdecl("ambience_bus_get_muted")
public func ambience_bus_get_muted(_ bus: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?) -> ambience_status {
    api("ambience_bus_get_muted") {
        let box = try busBox(bus)
        try output(out, "out_muted").pointee = box.bus.isMuted
    }
}

@_cdecl("ambience_bus_get_effective_gain")
public func ambience_bus_get_effective_gain(_ bus: OpaquePointer?, _ out: UnsafeMutablePointer<Float>?)
    -> ambience_status
{
    api("ambience_bus_get_effective_gain") {
        let box = try busBox(bus)
        try output(out, "out_gain").pointee = box.bus.effectiveGain
    }
}

@_cdecl("ambience_bus_set_reverb")
public func ambience_bus_set_reverb(_ bus: OpaquePointer?, _ preset: ambience_reverb_preset) -> ambience_status {
    api("ambience_bus_set_reverb") {
        let box = try busBox(bus)
        let chosen: ReverbPreset?
        switch preset {
        case AMBIENCE_REVERB_NONE: chosen = nil
        case AMBIENCE_REVERB_ROOM: chosen = .room
        case AMBIENCE_REVERB_HALL: chosen = .hall
        case AMBIENCE_REVERB_CAVE: chosen = .cave
        case AMBIENCE_REVERB_UNDERWATER: chosen = .underwater
        case AMBIENCE_REVERB_HANGAR: chosen = .hangar
        default: throw APIError.invalid("preset is \(preset.rawValue), not an ambience_reverb_preset")
        }
        guard box.owner.engine.setReverb(chosen, on: box.bus) else {
            throw APIError(AMBIENCE_ERROR_UNSUPPORTED, "reverb needs OpenAL's EFX extension, which this device lacks")
        }
    }
}

// MARK: - Ducking

@_cdecl("ambience_ducking_add")
public func ambience_ducking_add(
    _ engine: OpaquePointer?, _ trigger: OpaquePointer?, _ target: OpaquePointer?,
    _ depth: Float, _ attack: Double, _ release: Double
) -> ambience_status {
    api("ambience_ducking_add") {
        let box = try engineBox(engine)
        let triggerBox = try busBox(trigger, "trigger")
        let targetBox = try busBox(target, "target")
        guard triggerBox.owner === box, targetBox.owner === box else {
            throw APIError(AMBIENCE_ERROR_WRONG_ENGINE, "trigger and target must be buses of this engine")
        }
        guard triggerBox.handle != targetBox.handle else { throw APIError.invalid("a bus cannot duck itself") }
        let rule = try checked { () throws(InvalidNumber) in
            try DuckingRule(
                trigger: triggerBox.bus, target: targetBox.bus, depth: depth, attack: attack, release: release
            ).validated()
        }
        box.duckingLock.withLock { _ in box.engine.duckingRules.append(rule) }
    }
}

@_cdecl("ambience_ducking_clear")
public func ambience_ducking_clear(_ engine: OpaquePointer?) -> ambience_status {
    api("ambience_ducking_clear") {
        let box = try engineBox(engine)
        box.duckingLock.withLock { _ in box.engine.duckingRules = [] }
    }
}

@_cdecl("ambience_ducking_get_count")
public func ambience_ducking_get_count(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Int>?) -> ambience_status {
    api("ambience_ducking_get_count") {
        let box = try engineBox(engine)
        try output(out, "out_count").pointee = box.duckingLock.withLock { _ in box.engine.duckingRules.count }
    }
}
