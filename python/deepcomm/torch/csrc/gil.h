// Lets other Python threads run while this one blocks in DeepComm. Torch calls some of the
// backend's methods holding the GIL (Work.get_future); a wait there must not keep it, because the
// completion thread may need it: freeing a tensor whose Python object C++ keeps alive takes it.
#pragma once

#include <Python.h>

namespace deepcomm_torch {

class GilReleasedIfHeld {
 public:
  GilReleasedIfHeld() {
    if (Py_IsInitialized() && PyGILState_Check()) saved_ = PyEval_SaveThread();
  }
  ~GilReleasedIfHeld() {
    if (saved_) PyEval_RestoreThread(saved_);
  }
  GilReleasedIfHeld(const GilReleasedIfHeld&) = delete;
  GilReleasedIfHeld& operator=(const GilReleasedIfHeld&) = delete;

 private:
  PyThreadState* saved_ = nullptr;
};

}  // namespace deepcomm_torch
