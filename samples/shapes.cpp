// shapes.cpp - C++ objects that nobody owns, to try jmptrace on.
//
//   make shapes && ../jmptrace -- ./shapes
//
// A Scene keeps raw pointers to shapes in a std::vector. Scene::clear() empties the vector
// but does not delete the shapes, so the 180 shapes made before the last clear() leak (the
// last 20 are deleted by ~Scene): the report shows 90 blocks from each of the `new Circle`
// and `new Square` lines in make_shape(), inlined into main.
#include <cstdio>
#include <memory>
#include <vector>

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};

struct Circle : Shape {
	double r;
	explicit Circle(double radius) : r(radius) {}
	double area() const override { return 3.14159265 * r * r; }
};

struct Square : Shape {
	double side;
	explicit Square(double s) : side(s) {}
	double area() const override { return side * side; }
};

class Scene {
public:
	void add(Shape *s) { shapes_.push_back(s); }
	double total_area() const
	{
		double a = 0;
		for (const Shape *s : shapes_)
			a += s->area();
		return a;
	}
	// The bug: drops the pointers without deleting the shapes.
	void clear() { shapes_.clear(); }
	~Scene()
	{
		for (Shape *s : shapes_)
			delete s;
	}

private:
	std::vector<Shape *> shapes_;
};

static Shape *
make_shape(int i)
{
	if (i % 2)
		return new Circle(i);	// LEAK when cleared
	return new Square(i);		// LEAK when cleared
}

int
main()
{
	Scene scene;

	for (int frame = 0; frame < 10; frame++) {
		scene.clear();
		for (int i = 0; i < 20; i++)
			scene.add(make_shape(i));
		std::printf("frame %d: area %.1f\n", frame, scene.total_area());
	}
	// This one is done right: a unique_ptr frees its shape.
	auto c = std::make_unique<Circle>(1.0);
	std::printf("unit circle: %.2f\n", c->area());
	return 0;
}
