import Ambience
import AmbienceHost

/// The command line of `gravity-wave`.
public struct LaunchOptions: Sendable, Equatable {
    public var headless = false
    /// Headless, but at real-time pace through the audio device (SDL's dummy driver without a sound card), so that
    /// `engine.update()` is measured as a real game sees it: in an offline run the engine mixes in `render`, not in
    /// `update()`, and decodes music there instead of on its streaming thread.
    public var realtime = false
    /// Stop after this many seconds of game time (headless default: 10).
    public var seconds: Double?
    public var record: String?
    public var screenshot: String?
    /// Where to draw the effects' HDR window over the run (`HDRPlot`).
    public var hdrPlot: String?
    public var screenshotFrame = 60
    public var voices = 0
    public var seed: UInt64 = 1
    public var pilot = false
    public var assets: String?
    public var volumes: [String: Float] = [:]
    public var category = SessionCategory.ambient
    /// Steps to take at given frames (`--at FRAME:STEP`): how tests drive the built game through its screens.
    public var script: [ScriptStep] = []
    public var help = false

    public init() {}

    /// The most `--voices`: the voices the game's engine tracks at all (its default `maxVoices`). More could never
    /// all be kept playing, and the game's own sounds need room beside them.
    public static let maximumVoices = EngineConfiguration().maxVoices

    public static let usage = """
        usage: gravity-wave [--headless [--realtime]] [--seconds N] [--record OUT.wav] [--screenshot OUT.png] [--screenshot-frame N]
                            [--hdr-plot OUT.svg]
                            [--voices N] [--seed N] [--pilot] [--category ambient|solo-ambient|playback]
                            [--volume BUS=GAIN]... [--assets DIR] [--at FRAME:STEP]...

          --headless          no window: a scripted pilot plays, audio renders offline (also chosen when there is no display)
          --realtime          headless at real-time pace through the audio device (no --record): measures engine.update()
                              as a real game frame sees it
          --seconds N         stop after N seconds of game time (headless: 10 by default), and not before
                              the last --at step
          --record OUT.wav    write the game's audio (headless only)
          --screenshot OUT.png  save the picture after --screenshot-frame frames (60 by default)
          --hdr-plot OUT.svg  draw the effects' HDR window over the run: its top and the voices it culls, frame by
                              frame, the explosions marked
          --voices N          keep about N quiet ambient voices playing, to measure the engine under load
                              (at most 16384, the voices the engine tracks)
          --seed N            the world's random seed (1 by default): a seed always plays the same game
          --pilot             let the scripted pilot fly in the window too
          --category C        the audio session category at start (ambient by default, as UtopiaGL)
          --volume BUS=GAIN   master, music, sfx or ui, 0…1, for this run only
          --assets DIR        the folder holding SFX/ and Music/ (found beside the program by default)
          --at FRAME:STEP     at the end of frame FRAME: key=NAME (a key press: x, p, m, escape, enter, tab, up, down, f1…),
                              type=TEXT (typed text), click=X,Y (the left button), shot=OUT.png (a screenshot), seek=SECONDS (the game's music), interrupt=begin|end,
                              route-change (the output device goes away, as the session would report it)
        """

    public static func parse(_ arguments: [String]) throws(GameError) -> LaunchOptions {
        var options = LaunchOptions()
        var rest = arguments[...]
        func value(_ flag: String) throws(GameError) -> String {
            guard let next = rest.popFirst(), !next.hasPrefix("--") else { throw .usage("\(flag) needs a value") }
            return next
        }
        func number(_ flag: String, _ text: String) throws(GameError) -> Double {
            guard let n = Double(text), n.isFinite, n > 0 else {
                throw .usage("\(flag): '\(text)' is not a number above 0")
            }
            return n
        }
        func count(_ flag: String, _ text: String, allowZero: Bool = false) throws(GameError) -> Int {
            guard let n = Int(text), n > 0 || (allowZero && n == 0) else {
                throw .usage("\(flag): '\(text)' is not a whole number above 0")
            }
            return n
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--headless": options.headless = true
            case "--pilot": options.pilot = true
            case "--realtime":
                options.realtime = true
                options.headless = true
            case "--help", "-h": options.help = true
            case "--seconds": options.seconds = try number(argument, try value(argument))
            case "--record": options.record = try value(argument)
            case "--screenshot": options.screenshot = try value(argument)
            case "--hdr-plot": options.hdrPlot = try value(argument)
            case "--screenshot-frame": options.screenshotFrame = try count(argument, try value(argument))
            case "--voices":
                options.voices = try count(argument, try value(argument), allowZero: true)
                guard options.voices <= maximumVoices else {
                    throw .usage(
                        "--voices: \(options.voices) is more than the \(maximumVoices) voices the engine tracks")
                }
            case "--assets": options.assets = try value(argument)
            case "--seed":
                let text = try value(argument)
                guard let seed = UInt64(text) else { throw .usage("--seed: '\(text)' is not a whole number") }
                options.seed = seed
            case "--category":
                let text = try value(argument)
                switch text {
                case "ambient": options.category = .ambient
                case "solo-ambient", "soloAmbient": options.category = .soloAmbient
                case "playback": options.category = .playback
                default: throw .usage("--category: '\(text)' is not ambient, solo-ambient or playback")
                }
            case "--at":
                options.script.append(try ScriptStep.parse(try value(argument)))
            case "--volume":
                let text = try value(argument)
                let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, GameSettings.busNames.contains(parts[0]), let gain = Float(parts[1]), gain >= 0,
                    gain <= 1
                else {
                    throw .usage(
                        "--volume: '\(text)' is not BUS=GAIN with BUS one of \(GameSettings.busNames.joined(separator: ", ")) and GAIN 0…1"
                    )
                }
                options.volumes[parts[0]] = gain
            default:
                throw .usage("unknown argument '\(argument)'")
            }
        }
        if options.realtime && options.record != nil {
            throw .usage("--record cannot go with --realtime (the audio goes to the device)")
        }
        return options
    }
}

/// One step of a `--at` script, taken at the end of a frame.
public struct ScriptStep: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        case key(Key)
        /// Text typed, as the window's text input delivers it (the picker's filter).
        case text(String)
        /// A click of the left button at a point of the 960×600 screen.
        case click(x: Double, y: Double)
        case screenshot(String)
        case seekMusic(Double)
        case interruption(began: Bool)
        case routeChange
    }

    public var frame: Int
    public var action: Action

    public init(frame: Int, action: Action) {
        self.frame = frame
        self.action = action
    }

    static let keys: [String: Key] = [
        "escape": .escape, "enter": .enter, "tab": .tab, "space": .space, "up": .up, "down": .down,
        "left": .left, "right": .right, "backspace": .backspace, "f1": .function(1), "f2": .function(2),
        "f3": .function(3), "f4": .function(4), "f5": .function(5)
    ]

    /// `FRAME:key=x`, `FRAME:type=abc`, `FRAME:click=480,300`, `FRAME:shot=OUT.png`, `FRAME:seek=38.5`,
    /// `FRAME:interrupt=begin`, `FRAME:route-change`.
    static func parse(_ text: String) throws(GameError) -> ScriptStep {
        let bad = GameError.usage(
            "--at: '\(text)' is not FRAME:key=NAME, FRAME:type=TEXT, FRAME:click=X,Y, "
                + "FRAME:shot=OUT.png, FRAME:seek=SECONDS, "
                + "FRAME:interrupt=begin|end or FRAME:route-change")
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let frame = Int(parts[0]), frame > 0 else { throw bad }
        let step = parts[1].split(separator: "=", maxSplits: 1).map(String.init)
        switch (step.first, step.count == 2 ? step[1] : nil) {
        case ("key", let name?):
            if let key = keys[name] { return ScriptStep(frame: frame, action: .key(key)) }
            guard name.count == 1, let character = name.first else { throw bad }
            return ScriptStep(frame: frame, action: .key(.character(character)))
        case ("type", let text?) where !text.isEmpty:
            return ScriptStep(frame: frame, action: .text(text))
        case ("click", let point?):
            let xy = point.split(separator: ",").compactMap { Double($0) }
            guard xy.count == 2, xy.allSatisfy({ $0.isFinite && $0 >= 0 }) else { throw bad }
            return ScriptStep(frame: frame, action: .click(x: xy[0], y: xy[1]))
        case ("shot", let path?) where !path.isEmpty:
            return ScriptStep(frame: frame, action: .screenshot(path))
        case ("seek", let seconds?):
            guard let time = Double(seconds), time.isFinite, time >= 0 else { throw bad }
            return ScriptStep(frame: frame, action: .seekMusic(time))
        case ("interrupt", "begin"): return ScriptStep(frame: frame, action: .interruption(began: true))
        case ("interrupt", "end"): return ScriptStep(frame: frame, action: .interruption(began: false))
        case ("route-change", nil): return ScriptStep(frame: frame, action: .routeChange)
        default: throw bad
        }
    }
}

/// Why the game could not start.
public enum GameError: Error, CustomStringConvertible {
    case assets(String)
    case engine(String)
    case host(String)
    case usage(String)
    case output(String)

    public var description: String {
        switch self {
        case .assets(let m): "assets: \(m)"
        case .engine(let m), .host(let m), .output(let m), .usage(let m): m
        }
    }
}
