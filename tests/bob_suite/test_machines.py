# Adapted from bob.learn.boosting 2.0.19, bob/learn/boosting/tests/test_machines.py
# (github.com/bioidiap/bob.learn.boosting); what was changed: tests/bob_suite/README.md.
#
# bob.learn.boosting's licence:
#
# Copyright (c) 2016 Idiap Research Institute, http://www.idiap.ch/
# Written by Andre Anjos <andre.anjos@idiap.ch>
#
# Redistribution and use in source and binary forms, with or without
# modification, are permitted provided that the following conditions are met:
#
# 1. Redistributions of source code must retain the above copyright notice, this
# list of conditions and the following disclaimer.
#
# 2. Redistributions in binary form must reproduce the above copyright notice,
# this list of conditions and the following disclaimer in the documentation
# and/or other materials provided with the distribution.
#
# 3. Neither the name of the copyright holder nor the names of its contributors
# may be used to endorse or promote products derived from this software without
# specific prior written permission.
#
# THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND
# ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED
# WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
# DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
# FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
# DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
# SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
# CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
# OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
# OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.

import bob_boost.compat.alias  # noqa: F401  (adapted: bob.learn.boosting -> bob_boost.compat.bob)
import bob.learn.boosting
import numpy
import bob
from . import nose  # adapted: a stand-in for nose.tools.eq_ (nose does not run on Python 3.10+)
import os
import tempfile
import h5py  # adapted: h5py.File replaces bob.io.base.HDF5File


def test_machine():
  # test the stump machine
  stump = bob.learn.boosting.StumpMachine(0., 1., 0)

  scores = numpy.ndarray((1,), numpy.float64)
  stump(numpy.ones((1,1), dtype=numpy.uint16), scores)
  nose.tools.eq_(scores[0], 1)

  score = stump(numpy.ones((1,), dtype=numpy.float64))
  nose.tools.eq_(scores, 1)

  nose.tools.eq_(stump.threshold, 0.)
  nose.tools.eq_(stump.polarity, 1.)

  temp = tempfile.mkstemp(prefix = "xbbst_", suffix=".hdf5")[1]
  f = h5py.File(temp, 'w')
  stump.save(f)

  stump2 = bob.learn.boosting.StumpMachine(f)
  nose.tools.eq_(stump2.threshold, 0.)
  nose.tools.eq_(stump2.polarity, 1.)
  del f
  os.remove(temp)

  # test the LUT machine
  LUT = numpy.ones((1,1), float)
  indices = numpy.zeros((1,), numpy.int32)
  machine = bob.learn.boosting.LUTMachine(LUT, indices)

  score = machine(numpy.zeros((1,), dtype=numpy.uint16))
  nose.tools.eq_(score, 1)

  assert(numpy.allclose(machine.lut, LUT))

  temp = tempfile.mkstemp(prefix = "xbbst_", suffix=".hdf5")[1]
  f = h5py.File(temp, 'w')
  machine.save(f)

  machine2 = bob.learn.boosting.LUTMachine(f)
  assert(numpy.allclose(machine2.lut, LUT))
  del f
  os.remove(temp)

  boosted_machine = bob.learn.boosting.BoostedMachine()
  boosted_machine.add_weak_machine(stump, 1.)
  boosted_machine.add_weak_machine(machine, 1.)

  score = boosted_machine(numpy.zeros((1,), dtype=numpy.uint16))
  nose.tools.eq_(score, 2)

  scores = numpy.ndarray((1,), numpy.float64)
  labels = numpy.ndarray((1,), numpy.float64)
  boosted_machine(numpy.zeros((1,1), dtype=numpy.uint16), scores, labels)
  nose.tools.eq_(scores[0], 2)
  nose.tools.eq_(labels[0], 1)

  # check IO functionality
  file = tempfile.mkstemp(prefix='bob.learn_test_')[1]
  boosted_machine.save(h5py.File(file, 'w'))
  new_machine = bob.learn.boosting.BoostedMachine(h5py.File(file))
  os.remove(file)
  assert (new_machine.alpha == 1).all()

  # forward some features with the new strong machine
  score = new_machine(numpy.zeros((1,), dtype=numpy.uint16))
  nose.tools.eq_(score, 2)

  scores = numpy.ndarray((1,), numpy.float64)
  new_machine(numpy.zeros((1,1), dtype=numpy.uint16), scores)
  nose.tools.eq_(scores[0], 2)

  labels = numpy.ndarray((1,), numpy.float64)
  new_machine(numpy.zeros((1,1), dtype=numpy.uint16), scores, labels)
  nose.tools.eq_(scores[0], 2)
  nose.tools.eq_(labels[0], 1)

if __name__ == '__main__':
  test_machine()
