/// The one object every handle of a mixer (`Voice`, `Bus`) shares. Handles hold it strongly and it holds the mixer
/// weakly, so handles kept by the game (or waiting in the event queue) never keep a shut-down mixer alive, and copying
/// a handle costs a retain rather than a weak-reference copy (which dominated games that keep thousands of handles in
/// collections).
package final class HandleOwner: @unchecked Sendable {
    // Set once, in the mixer's init, before any handle exists.
    private(set) weak var mixer: Mixer?

    init() {}

    func bind(_ mixer: Mixer) { self.mixer = mixer }
}
