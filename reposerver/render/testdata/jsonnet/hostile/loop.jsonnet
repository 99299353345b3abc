local f(x) = f(x + 1);
f(0)
