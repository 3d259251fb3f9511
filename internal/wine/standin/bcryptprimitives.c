/*
 * bcryptprimitives.dll for Wine 8: Go >= 1.22 programs import ProcessPrng from it for their random numbers, and
 * Wine 8.0 (Debian 12's) has no such DLL, so no Go test binary would even start. This one forwards ProcessPrng to
 * RtlGenRandom (advapi32's SystemFunction036), which Wine has. internal/wine/test-windows builds it with mingw and
 * puts it into the Wine prefix only when Wine has no bcryptprimitives.dll of its own: it goes when the Wine we
 * install ships one (later Wine releases do).
 */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE dll, DWORD reason, LPVOID reserved)
{
    return TRUE;
}
