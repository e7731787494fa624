import Synchronization

/// The frames a mixer has rendered, counted by whoever renders (the audio thread or an offline render) and read by any
/// thread. An object of its own, so that a reader may keep it past its mixer's life: the SDL_mixer stand-in's
/// Mix_Playing compares end frames with it without a lock or a reference to the engine (PlayingAnswers.swift).
package final class RenderedFrames: Sendable {
    private let frames = Atomic<Int>(0)

    package init() {}

    /// The frames rendered so far (relaxed: a count, ordering nothing else).
    package var count: Int { frames.load(ordering: .relaxed) }

    /// Counts `rendered` more frames.
    package func add(_ rendered: Int) { frames.add(rendered, ordering: .relaxed) }
}
