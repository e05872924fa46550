// C++ class members via this-> (abi-reference 6.7, 6.8): member functions
// mapping this->x, this->data[0:n] (a pointer member: attached), the whole
// object as this[0:1], RAII enter data in a constructor / exit data in the
// destructor, a partial map of two members (the others keep their host
// values), and a const member function reading members on the device.
#include <cstdio>
#include <omp.h>

class Grid {
public:
  Grid(int n, int fill) : n_(n), scale_(1.5), tag_(7) {
    data_ = new int[n];
    for (int i = 0; i < n; i++)
      data_[i] = fill + i;
#pragma omp target enter data map(to : this->n_, this->scale_, this->data_, this->data_[0:n_])
  }
  ~Grid() {
#pragma omp target exit data map(release : this->n_, this->scale_, this->data_, this->data_[0:n_])
    delete[] data_;
  }
  // device work through the object's members
  int scale_on_device() {
    int on_host = -1;
#pragma omp target map(from : on_host) map(to : this->n_, this->scale_) map(tofrom : this->data_[0:n_])
    {
      for (int i = 0; i < n_; i++)
        data_[i] = (int)(data_[i] * scale_);
      on_host = omp_is_initial_device();
    }
    return on_host;
  }
  void pull() {
#pragma omp target update from(this->data_[0:n_])
  }
  int device_sum() const {
    int s = 0;
#pragma omp target map(tofrom : s) map(to : this->n_, this->data_[0:n_])
    {
      for (int i = 0; i < n_; i++)
        s += data_[i];
    }
    return s;
  }
  void set_scale(double s) {
    scale_ = s;
#pragma omp target update to(this->scale_)
  }
  int at(int i) const { return data_[i]; }
  int tag() const { return tag_; }
  bool present() const { return omp_target_is_present(data_, omp_get_default_device()); }

private:
  int n_;
  double scale_;
  int *data_;
  int tag_;
};

struct Point {
  int x, y, z;
  double w;
  void bump() {
#pragma omp target map(tofrom : this->x, this->z)
    {
      x += 10;
      z += 30;
    }
  }
  void whole() {
#pragma omp target map(tofrom : this[0:1])
    {
      x = -x;
      y = -y;
      w *= 2;
    }
  }
};

int main() {
  {
    Grid g(8, 10);
    std::printf("constructed: present=%d\n", g.present());
    int h = g.scale_on_device(); // data_ present: not copied back yet
    std::printf("scaled: on_host=%d host at(1)=%d\n", h, g.at(1));
    g.pull();
    std::printf("after pull: at(0)=%d at(7)=%d device sum=%d tag=%d\n", g.at(0), g.at(7), g.device_sum(), g.tag());
    g.set_scale(2.0);
    g.scale_on_device();
    g.pull();
    std::printf("scale 2: at(0)=%d at(7)=%d\n", g.at(0), g.at(7));
  }
  Point p{1, 2, 3, 0.5};
  p.bump();
  std::printf("partial this->x, this->z: %d %d %d %.1f\n", p.x, p.y, p.z, p.w);
  p.whole();
  std::printf("this[0:1]: %d %d %d %.1f\n", p.x, p.y, p.z, p.w);
  return 0;
}
