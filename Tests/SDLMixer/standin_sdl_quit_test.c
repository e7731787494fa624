/* A program that shuts SDL down under the mixer, as games do at exit: SDL_Quit with the mixer still open (then
 * Mix_CloseAudio, or nothing), SDL_QuitSubSystem(SDL_INIT_AUDIO), and exit() while channels play. Each mode runs in
 * a process of its own (SDL_Quit is for the whole process); it must end with status 0 and no crash. Real SDL_mixer
 * survives them all. Usage: standin_sdl_quit_test quit-then-close|quit-subsystem|exit-playing|quit-at-exit */
#include <SDL.h>
#include <SDL_mixer.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int finished;
static void on_finished(int channel) { (void)channel; finished++; }

/* A 440 Hz tone of `seconds` in the opened format (S16 stereo here), as a chunk the program owns the bytes of. */
static Mix_Chunk *tone(double seconds) {
    int frames = (int)(44100 * seconds), i;
    Sint16 *samples = malloc((size_t)frames * 4);
    for (i = 0; i < frames; i++) {
        Sint16 value = (Sint16)(8000 * sin(6.283185307179586 * 440 * i / 44100.0));
        samples[2 * i] = samples[2 * i + 1] = value;
    }
    return Mix_QuickLoad_RAW((Uint8 *)samples, (Uint32)frames * 4);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    Mix_Chunk *chunk;
    if (SDL_Init(SDL_INIT_AUDIO) != 0 || Mix_OpenAudio(44100, AUDIO_S16SYS, 2, 512) != 0) {
        printf("open: %s\n", SDL_GetError());
        return 1;
    }
    Mix_ChannelFinished(on_finished);
    chunk = tone(0.5);
    if (Mix_PlayChannel(-1, chunk, -1) < 0 || Mix_PlayChannel(-1, chunk, 3) < 0) {
        printf("play: %s\n", Mix_GetError());
        return 1;
    }
    SDL_Delay(100);
    if (strcmp(mode, "quit-then-close") == 0) {
        SDL_Quit();
        SDL_Delay(300);
        printf("playing after SDL_Quit: %d\n", Mix_Playing(-1));
        Mix_CloseAudio();
        printf("closed, %d finished\n", finished);
    } else if (strcmp(mode, "quit-subsystem") == 0) {
        /* The mixer holds its own reference: the program's quit leaves its device open and playing. */
        SDL_QuitSubSystem(SDL_INIT_AUDIO);
        SDL_Delay(300);
        printf("playing after SDL_QuitSubSystem: %d\n", Mix_Playing(-1));
        printf("a new play: %s\n", Mix_PlayChannel(-1, chunk, 0) >= 0 ? "yes" : Mix_GetError());
        Mix_CloseAudio();
    } else if (strcmp(mode, "exit-playing") == 0) {
        printf("exit while playing\n");
        fflush(stdout);
        exit(0);
    } else if (strcmp(mode, "quit-at-exit") == 0) {
        SDL_Quit();
        printf("SDL_Quit, then the end of main without Mix_CloseAudio\n");
        return 0;
    } else {
        printf("unknown mode '%s'\n", mode);
        return 2;
    }
    printf("end\n");
    return 0;
}
