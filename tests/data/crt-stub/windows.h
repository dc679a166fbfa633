#pragma once
typedef unsigned long DWORD;
typedef int BOOL;
__declspec(dllimport) BOOL __stdcall IsProcessorFeaturePresent(DWORD feature);
