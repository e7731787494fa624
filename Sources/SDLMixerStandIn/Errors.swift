import AmbiencePlatform
import CSDLMixerABI

// SDL_mixer reports failure by a return value (-1, NULL or 0, function by function) and the reason in SDL's error
// text, which programs read with Mix_GetError (a macro for SDL_GetError). These set that text.

/// Sets the error text and returns SDL_mixer's usual -1.
@discardableResult
func refuse(_ reason: String) -> Int32 {
    reason.withCString { _ = standin_set_error($0) }
    return -1
}

/// Sets the error text, for functions that fail with NULL or 0 rather than -1.
func report(_ reason: String) {
    reason.withCString { _ = standin_set_error($0) }
}

/// Why a function the stand-in does not offer yet fails: the same words everywhere, naming the function.
func notYetSupported(_ function: String) -> String {
    "\(function) is not supported by the Ambience SDL_mixer stand-in yet"
}

/// The words for a call that needs the device open.
let deviceNotOpen = "Audio device hasn't been opened"

/// What the session's rules did for the program, as one line on stderr, `ambience: sdl-mixer: …`, with control
/// characters (from a device's name) shown as `?`: the program cannot say it, and its user should know.
func announce(_ text: String) {
    let shown = String(
        String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0 == "\u{7F}" ? "?" : $0 }))
    StandardStream.error.writeWhole("ambience: sdl-mixer: \(shown)\n")
}
