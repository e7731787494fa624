/// A key, by what it means rather than by SDL's number.
public enum Key: Hashable, Sendable {
    case left, right, up, down
    case space, escape, enter, backspace, tab, delete, home, end, pageUp, pageDown
    /// A printable key, unshifted and lower-case: `"w"`, `"1"`, `"-"`.
    case character(Character)
    /// F1 is `.function(1)`.
    case function(Int)
    /// Any other key, as SDL's key code.
    case other(Int32)
}

/// What changed about the window.
public enum WindowChange: Sendable, Equatable {
    case shown, hidden, exposed, minimized, maximized, restored, focusGained, focusLost, resized(
        width: Int, height: Int)
    /// The window manager asked to close the window (SDL follows it with `.quit` when it was the last one).
    case close
}

/// The application lifecycle events SDL reports (mobile and some desktop back-ends send them).
public enum AppLifecycle: Sendable, Equatable {
    case willEnterBackground, didEnterBackground, willEnterForeground, didEnterForeground, lowMemory, terminating
}

/// An input or system event, translated from SDL. Delivered by `GameHost` to the game's event handler.
public enum HostEvent: Sendable, Equatable {
    case keyDown(Key, isRepeat: Bool)
    case keyUp(Key)
    /// Typed text (UTF-8), after keyboard layout and input method.
    case text(String)
    /// Button 1 is the left button. Positions are in the canvas's logical coordinates.
    case mouseDown(Point, button: Int)
    case mouseUp(Point, button: Int)
    case mouseMoved(Point)
    /// Positive is away from the user (scroll up).
    case mouseWheel(Int)
    case window(WindowChange)
    case app(AppLifecycle)
    /// An audio device appeared or went away. The engine polls its own device; nothing needs doing here.
    case audioDevicesChanged
    case quit
}
