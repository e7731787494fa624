/* What one OpenAL Soft call costs on a loopback device with N sources, for docs/bench/profile.md: the calls that
 * `play()` makes to start a voice on a real source, timed one by one (median of many). Built and run by
 * scripts/profile-mix.sh:  cc -O2 scripts/al-call-costs.c -lopenal -o al-call-costs && ./al-call-costs 256 1024 4096
 * Not part of the package: a measuring stick for the engine's own calls. */
#include <AL/al.h>
#include <AL/alc.h>
#include <AL/alext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static LPALCLOOPBACKOPENDEVICESOFT loopbackOpen;
static LPALCRENDERSAMPLESSOFT renderSamples;
static PFNALCSETTHREADCONTEXTPROC setThreadContext;

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int compare(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static double median(long long *values, int count) {
    qsort(values, count, sizeof values[0], compare);
    return (double)values[count / 2];
}

static void measure(int count) {
    ALCdevice *device = loopbackOpen(NULL);
    ALCint attributes[] = {ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
                           ALC_FREQUENCY, 48000, ALC_MONO_SOURCES, count, 0};
    ALCcontext *context = alcCreateContext(device, attributes);
    setThreadContext(context);
    enum { frames = 480 }; /* a 10 ms blip: it ends within the next 1024-frame block */
    static float blip[frames];
    for (int i = 0; i < frames; i++) blip[i] = (i % 48 < 24) ? 0.1f : -0.1f;
    ALuint buffer;
    alGenBuffers(1, &buffer);
    alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, blip, sizeof blip, 48000);
    ALuint *sources = calloc(count, sizeof *sources);
    alGenSources(count, sources);
    /* Every source busy with a long loop but the last: what the engine's all-real pools look like. */
    for (int i = 0; i < count; i++) {
        alSourcei(sources[i], AL_BUFFER, (ALint)buffer);
        alSourcei(sources[i], AL_LOOPING, i < count - 1 ? AL_TRUE : AL_FALSE);
        alSource3f(sources[i], AL_POSITION, (float)(i % 17), 0, -(float)(i % 13));
    }
    alSourcePlayv(count - 1, sources);
    float *out = malloc(sizeof(float) * 2 * 1024);
    enum { rounds = 2000 };
    static long long play[rounds], gain[rounds], position[rounds], pitch[rounds], contextPair[rounds], stop[rounds];
    ALuint one = sources[count - 1];
    for (int r = 0; r < rounds; r++) {
        long long t0 = now();
        alSourcef(one, AL_GAIN, r % 2 ? 0.5f : 0.6f);
        long long t1 = now();
        alSource3f(one, AL_POSITION, (float)(r % 7), 0, -1);
        long long t2 = now();
        alSourcef(one, AL_PITCH, r % 2 ? 1.05f : 0.95f);
        long long t3 = now();
        alSourcePlay(one);
        long long t4 = now();
        setThreadContext(NULL);
        setThreadContext(context);
        long long t5 = now();
        gain[r] = t1 - t0;
        position[r] = t2 - t1;
        pitch[r] = t3 - t2;
        play[r] = t4 - t3;
        contextPair[r] = t5 - t4;
        renderSamples(device, out, 1024); /* the blip plays out: the source stops and gives back its voice */
        long long t6 = now();
        alSourceStop(one);
        stop[r] = now() - t6;
    }
    printf("| %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", count, median(play, rounds), median(gain, rounds),
           median(position, rounds), median(pitch, rounds), median(contextPair, rounds), median(stop, rounds));
    alSourceStopv(count, sources);
    alDeleteSources(count, sources);
    alDeleteBuffers(1, &buffer);
    setThreadContext(NULL);
    alcDestroyContext(context);
    alcCloseDevice(device);
    free(sources);
    free(out);
}

int main(int argc, char **argv) {
    loopbackOpen = (LPALCLOOPBACKOPENDEVICESOFT)alcGetProcAddress(NULL, "alcLoopbackOpenDeviceSOFT");
    renderSamples = (LPALCRENDERSAMPLESSOFT)alcGetProcAddress(NULL, "alcRenderSamplesSOFT");
    setThreadContext = (PFNALCSETTHREADCONTEXTPROC)alcGetProcAddress(NULL, "alcSetThreadContext");
    if (!loopbackOpen || !renderSamples || !setThreadContext) {
        fprintf(stderr, "al-call-costs: OpenAL Soft's loopback and thread-context extensions are missing\n");
        return 1;
    }
    printf("| sources | alSourcePlay (stopped one-shot) | alSourcef gain | alSource3f position | alSourcef pitch | "
           "alcSetThreadContext out and back | alSourceStop |\n|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 1; i < argc; i++) {
        int count = atoi(argv[i]);
        if (count < 2 || count > 100000) {
            fprintf(stderr, "al-call-costs: %s: a source count from 2 to 100000\n", argv[i]);
            return 1;
        }
        measure(count);
    }
    return 0;
}
